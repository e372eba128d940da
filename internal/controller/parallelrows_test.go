package controller

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/snapshot"
)

func TestRowFiles(t *testing.T) {
	tests := []struct {
		name    string
		p       job.ParallelRun
		outType string
		want    rowLayout
	}{
		{"a folder", job.ParallelRun{}, job.URIFolder,
			rowLayout{"parallel_run_step.txt", []string{"parallel_run_step_0.txt", "parallel_run_step_1.txt"}}},
		{"output_file_name", job.ParallelRun{OutputFileName: "predictions.csv"}, job.URIFolder,
			rowLayout{"predictions.csv", []string{"predictions_0.csv", "predictions_1.csv"}}},
		{"leading dots are no extension (Python's splitext)", job.ParallelRun{OutputFileName: "..csv"}, job.URIFolder,
			rowLayout{"..csv", []string{"..csv_0", "..csv_1"}}},
		{"two dots", job.ParallelRun{OutputFileName: "a.b.csv"}, job.URIFolder,
			rowLayout{"a.b.csv", []string{"a.b_0.csv", "a.b_1.csv"}}},
		{"a uri_file output is named after the output", job.ParallelRun{OutputFileName: "ignored.csv"}, job.URIFile,
			rowLayout{"scores", []string{"scores_0", "scores_1"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := rowFiles(&tt.p, tt.outType, "scores", 2)
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(rowLayout{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func sized(p string, c byte, size int64) snapshot.Entry {
	e := file(p, c)
	e.Size = size
	return e
}

func TestPlanRowMerge(t *testing.T) {
	l := rowLayout{"rows.txt", []string{"rows_0.txt", "rows_1.txt"}}
	idx := func(spans ...[2]int64) *rowIndex { return &rowIndex{MiniBatches: spans} }
	type piece struct {
		Hash      byte
		Off, Size int64
	}
	tests := []struct {
		name     string
		tree     *snapshot.Manifest
		indexes  []*rowIndex
		want     []piece // nil: no merge
		paths    []string
		warnings string
	}{
		{"mini-batch order across the nodes",
			tree(sized("rows_0.txt", 'a', 30), sized("rows_0.txt"+rowIndexSuffix, 'x', 9), sized("rows_1.txt", 'b', 7),
				sized("rows_1.txt"+rowIndexSuffix, 'y', 9), file("other", 'o')),
			[]*rowIndex{idx([2]int64{0, 10}, [2]int64{2, 15}, [2]int64{4, 5}), idx([2]int64{1, 3}, [2]int64{3, 4})},
			[]piece{{'a', 0, 10}, {'b', 0, 3}, {'a', 10, 15}, {'b', 3, 4}, {'a', 25, 5}},
			[]string{"other=o", "rows.txt="}, ""},
		{"a node with no rows (failed or empty mini-batches)",
			tree(sized("rows_0.txt", 'a', 4), sized("rows_1.txt", 'b', 0)),
			[]*rowIndex{idx([2]int64{2, 4}), idx()},
			[]piece{{'a', 0, 4}}, []string{"rows.txt="}, ""},
		{"a node without an index goes last, and the run says so",
			tree(sized("rows_0.txt", 'a', 4), sized("rows_1.txt", 'b', 6)),
			[]*rowIndex{nil, idx([2]int64{1, 6})},
			[]piece{{'b', 0, 6}, {'a', 0, 4}}, []string{"rows.txt="}, "the rows of node(s) 0 follow the others in rows.txt"},
		{"an index that does not match its file counts as none",
			tree(sized("rows_0.txt", 'a', 4), sized("rows_1.txt", 'b', 6)),
			[]*rowIndex{idx([2]int64{0, 5}), idx([2]int64{1, 6})},
			[]piece{{'b', 0, 6}, {'a', 0, 4}}, []string{"rows.txt="}, "node(s) 0 follow"},
		{"a node that delivered nothing", tree(sized("rows_1.txt", 'b', 6)), []*rowIndex{nil, idx([2]int64{1, 6})},
			[]piece{{'b', 0, 6}}, []string{"rows.txt="}, ""},
		{"no rows files: nothing to merge", tree(file("other", 'o')), nil, nil, nil, ""},
		{"the merged name is taken: left as it is", tree(file("rows.txt", 'r'), sized("rows_0.txt", 'a', 4)), nil, nil, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := planRowMerge(tt.tree, l, tt.indexes, "scores")
			if tt.want == nil {
				if m != nil {
					t.Fatalf("merged %+v, want nothing", m)
				}
				return
			}
			if m == nil {
				t.Fatal("no merge")
			}
			var got []piece
			var size int64
			for _, p := range m.pieces {
				got = append(got, piece{p.hash[0], p.offset, p.length})
				size += p.length
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("pieces (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.paths, paths(m.tree)); diff != "" {
				t.Errorf("tree (-want +got):\n%s", diff)
			}
			if e := m.tree.Entries[m.merged]; e.Path != "rows.txt" || e.Size != size {
				t.Errorf("merged entry %+v, want rows.txt of %d bytes", e, size)
			}
			if w := strings.Join(m.warnings, "\n"); (tt.warnings == "") != (w == "") || !strings.Contains(w, tt.warnings) {
				t.Errorf("warnings %q, want %q", w, tt.warnings)
			}
		})
	}
}

// rowsPart is one node's part of a 2-node parallel run: its rows file (a mini-batch per element
// of batches, numbered rank, rank+2, ...) and the index the driver writes beside it.
func (f *fixture) rowsPart(t *testing.T, rank int, batches ...string) api.ArtifactsReport {
	t.Helper()
	var rows strings.Builder
	idx := rowIndex{MiniBatches: [][2]int64{}}
	for i, b := range batches {
		rows.WriteString(b)
		idx.MiniBatches = append(idx.MiniBatches, [2]int64{int64(rank + 2*i), int64(len(b))})
	}
	ib, _ := json.Marshal(idx)
	entry := func(p string, b []byte) snapshot.Entry {
		h, err := f.c.Blobs.PutBytes(b)
		if err != nil {
			t.Fatal(err)
		}
		return snapshot.Entry{Path: p, Type: snapshot.TypeFile, Hash: h, Size: int64(len(b)), Mode: 0o644}
	}
	part := fmt.Sprintf("parallel_run_step_%d.txt", rank)
	out := f.putTree(t, tree(entry(part, []byte(rows.String())), entry(part+rowIndexSuffix, ib)))
	return api.ArtifactsReport{Node: rank, Artifacts: f.putTree(t, tree()), NamedOutputs: map[string]string{"rows": out}}
}

func (f *fixture) createParallel(t *testing.T) *job.Run {
	t.Helper()
	r, err := f.c.Create(t.Context(), api.CreateJobRequest{Spec: parallelJob()})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// restart is a new controller over the same store and blobs: all a server killed with -9 keeps.
func (f *fixture) restart() {
	f.c = New(f.c.Config)
}

// A 2-node parallel job's output holds one rows file, every node's rows in mini-batch order, and
// no per-node files; a server killed after node 1 delivered merges when node 0 delivers, and the
// merge is the same blob whenever it is done again.
func TestMultiNodeParallelRowsAreMerged(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	r := f.createParallel(t)
	f.placeOnNodes(t, r.ID, "n0", "n1")
	if _, err := f.c.RegisterArtifacts(ctx, r.ID, f.rowsPart(t, 1, "b1\n", "b3\nb3\n")); err != nil {
		t.Fatal(err)
	}
	f.restart()
	if reply, err := f.c.RegisterArtifacts(ctx, r.ID, f.rowsPart(t, 0, "b0\n", "", "b4\n")); err != nil || len(reply.WaitingFor) != 0 {
		t.Fatalf("node 0 = %+v, %v", reply, err)
	}
	got := f.run(t, r.ID)
	m, err := f.c.readManifest(got.NamedOutputs["rows"])
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Entries) != 1 || m.Entries[0].Path != "parallel_run_step.txt" {
		t.Fatalf("output rows holds %v, want parallel_run_step.txt alone", paths(m))
	}
	b, err := f.c.Blobs.Open(m.Entries[0].Hash)
	if err != nil {
		t.Fatal(err)
	}
	text, _ := io.ReadAll(b)
	b.Close()
	if want := "b0\nb1\nb3\nb3\nb4\n"; string(text) != want || m.Entries[0].Size != int64(len(want)) {
		t.Errorf("parallel_run_step.txt = %q (size %d), want %q", text, m.Entries[0].Size, want)
	}
	if len(got.Warnings) != 0 {
		t.Errorf("warnings %q", got.Warnings)
	}
	// Merging the same parts again (a server killed after writing the merged blob, before
	// recording the assembly) gives the same output.
	parts, err := f.c.Store.Runs.RunParts(ctx, r.ID, 1)
	if err != nil {
		t.Fatal(err)
	}
	_, named, _, err := f.c.mergeParts(parts, assemblyPlan{ready: true, from: []int{0, 1}})
	if err != nil {
		t.Fatal(err)
	}
	again, _, err := f.c.Parents.mergeParallelRows(got, named)
	if err != nil || again["rows"] != got.NamedOutputs["rows"] {
		t.Errorf("merged again: %s, %v; want the stored %s", again["rows"], err, got.NamedOutputs["rows"])
	}
}

// A single-node parallel job's output is left as the driver wrote it.
func TestSingleNodeParallelRowsUnchanged(t *testing.T) {
	f := newFixture(t)
	r := f.createParallel(t)
	rep := f.rowsPart(t, 0, "b0\n")
	if _, err := f.c.RegisterArtifacts(t.Context(), r.ID, rep); err != nil {
		t.Fatal(err)
	}
	if got := f.run(t, r.ID).NamedOutputs["rows"]; got != rep.NamedOutputs["rows"] {
		t.Errorf("output rows = %s, want node 0's manifest %s", got, rep.NamedOutputs["rows"])
	}
}
