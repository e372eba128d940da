package controller

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/snapshot"
)

// A parallel job on n > 1 nodes has each node write its rows to <stem>_<rank><ext> in the
// append_row_to output, with an index beside it (the mini-batches' indexes and byte counts, see
// internal/parallel/driver.py). When the run's artifacts are assembled, the rows files become the
// one file Azure gives (parallel_run_step.txt, or output_file_name), rows in mini-batch order:
// planRowMerge decides from the output's manifest and the indexes, mergeParallelRows writes the
// merged blob and the new manifest. Both happen before the assembly is stored, and blobs are
// content-addressed, so a server killed in between merges again, to the same blob, on restart.

// rowIndexSuffix names a rows file's index (driver.py's INDEX_SUFFIX).
const rowIndexSuffix = ".hangar-index.json"

// defaultRowFile is the rows file of a folder output (driver.py's ROW_FILE).
const defaultRowFile = "parallel_run_step.txt"

// maxRowIndexBytes bounds an index the server reads whole: about a million mini-batches.
const maxRowIndexBytes = 32 << 20

// rowLayout names the rows files of a multi-node parallel run in its output's tree.
type rowLayout struct {
	merged string   // the one file the user gets
	parts  []string // each node's rows file, by rank
}

// rowFiles is the layout of a run's rows files: in a uri_file output the file is named after the
// output (the supervisor's prepareOutputs), in a folder it is output_file_name or
// parallel_run_step.txt. The parts are named as the driver names them (Python's splitext).
func rowFiles(p *job.ParallelRun, outType, output string, nodes int) rowLayout {
	merged := defaultRowFile
	switch {
	case outType == job.URIFile:
		merged = output
	case p.OutputFileName != "":
		merged = p.OutputFileName
	}
	stem, ext := splitExt(merged)
	l := rowLayout{merged: merged}
	for rank := range nodes {
		l.parts = append(l.parts, fmt.Sprintf("%s_%d%s", stem, rank, ext))
	}
	return l
}

// splitExt is Python's os.path.splitext on a file name: leading dots are not an extension.
func splitExt(name string) (stem, ext string) {
	i := strings.LastIndexByte(name, '.')
	if i <= len(name)-len(strings.TrimLeft(name, ".")) {
		return name, ""
	}
	return name[:i], name[i:]
}

// rowIndex is a rows file's index: [mini-batch index, bytes] for each mini-batch with rows, in
// the file's order.
type rowIndex struct {
	MiniBatches [][2]int64 `json:"mini_batches"`
}

// rowPiece is a byte range of a stored blob.
type rowPiece struct {
	hash           string
	offset, length int64
}

// rowMerge is what planRowMerge decided: the output's new tree, whose entry merged is to get the
// hash and size of the pieces concatenated.
type rowMerge struct {
	tree     *snapshot.Manifest
	merged   int // index of the merged file's entry in tree
	pieces   []rowPiece
	warnings []string
}

// planRowMerge merges the rows files of layout in tree, given the indexes read (by rank; nil
// where a node wrote none, or an unreadable one). Rows follow mini-batch order; a rows file
// without a usable index (its node stopped before writing it, or it does not match the file)
// has its rows appended after the others, and the run says so. It returns nil when there is
// nothing to merge: no rows file, or the merged name is taken.
func planRowMerge(tree *snapshot.Manifest, l rowLayout, indexes []*rowIndex, output string) *rowMerge {
	byPath := map[string]snapshot.Entry{}
	for _, e := range tree.Entries {
		byPath[e.Path] = e
	}
	if _, taken := byPath[l.merged]; taken {
		return nil
	}
	type span struct {
		batch, rank int64
		piece       rowPiece
	}
	var spans, unordered []span
	drop := map[string]bool{}
	var late []string
	for rank, part := range l.parts {
		e, ok := byPath[part]
		if !ok || e.Type != snapshot.TypeFile {
			continue
		}
		drop[part], drop[part+rowIndexSuffix] = true, true
		var idx *rowIndex
		if rank < len(indexes) {
			idx = indexes[rank]
		}
		pieces, ok := indexSpans(idx, e)
		if !ok {
			unordered = append(unordered, span{rank: int64(rank), piece: rowPiece{e.Hash, 0, e.Size}})
			late = append(late, fmt.Sprint(rank))
			continue
		}
		for i, p := range pieces {
			spans = append(spans, span{batch: idx.MiniBatches[i][0], rank: int64(rank), piece: p})
		}
	}
	if len(drop) == 0 {
		return nil
	}
	slices.SortStableFunc(spans, func(a, b span) int {
		return cmp.Or(cmp.Compare(a.batch, b.batch), cmp.Compare(a.rank, b.rank))
	})
	m := &rowMerge{tree: &snapshot.Manifest{}}
	var size int64
	for _, s := range append(spans, unordered...) {
		if s.piece.length > 0 {
			m.pieces = append(m.pieces, s.piece)
			size += s.piece.length
		}
	}
	for _, e := range tree.Entries {
		if !drop[e.Path] {
			m.tree.Entries = append(m.tree.Entries, e)
		}
	}
	m.merged = len(m.tree.Entries)
	m.tree.Entries = append(m.tree.Entries, snapshot.Entry{Path: l.merged, Type: snapshot.TypeFile, Size: size, Mode: 0o644})
	if len(late) > 0 {
		m.warnings = append(m.warnings, fmt.Sprintf("output %s: the rows of node(s) %s follow the others in %s: their mini-batch order was not recorded",
			output, strings.Join(late, ", "), l.merged))
	}
	return m
}

// indexSpans cuts a rows file into its mini-batches' byte ranges, if its index matches it.
func indexSpans(idx *rowIndex, e snapshot.Entry) ([]rowPiece, bool) {
	if idx == nil {
		return nil, false
	}
	var out []rowPiece
	var off int64
	for _, mb := range idx.MiniBatches {
		if mb[0] < 0 || mb[1] < 0 || off+mb[1] > e.Size {
			return nil, false
		}
		out = append(out, rowPiece{e.Hash, off, mb[1]})
		off += mb[1]
	}
	return out, off == e.Size
}

// mergeParallelRows merges the rows files of a multi-node parallel run's append_row_to output
// (see planRowMerge) and returns the named outputs with that output's new manifest. Other runs'
// outputs are returned as they are.
func (n *Parents) mergeParallelRows(r *job.Run, named map[string]string) (map[string]string, []string, error) {
	c := n.c
	p, nodes := r.Spec.Parallel, nodeCount(r)
	if p == nil || p.AppendRowTo == "" || nodes < 2 || named[p.AppendRowTo] == "" {
		return named, nil, nil
	}
	out := p.AppendRowTo
	tree, err := c.readManifest(named[out])
	if err != nil {
		return nil, nil, fmt.Errorf("merge the rows of output %s: %w", out, err)
	}
	l := rowFiles(p, r.Spec.Outputs[out].Type, out, nodes)
	indexes := make([]*rowIndex, nodes)
	var warnings []string
	for rank, part := range l.parts {
		if indexes[rank], err = c.Parents.readRowIndex(tree, part+rowIndexSuffix); err != nil {
			warnings = append(warnings, fmt.Sprintf("output %s: %v", out, err))
		}
	}
	m := planRowMerge(tree, l, indexes, out)
	if m == nil {
		return named, warnings, nil
	}
	var hashes []string
	for _, piece := range m.pieces {
		hashes = append(hashes, piece.hash)
	}
	if missing := c.Blobs.Missing(hashes); len(missing) > 0 {
		// Files a node listed but never uploaded: the output stays as the nodes left it.
		return named, append(warnings, fmt.Sprintf("output %s: rows files not merged into %s: blobs %v missing", out, l.merged, missing)), nil
	}
	e := &m.tree.Entries[m.merged]
	if e.Hash, e.Size, err = c.Parents.concatBlobs(m.pieces); err != nil {
		return nil, nil, fmt.Errorf("merge the rows of output %s: %w", out, err)
	}
	b, _, err := m.tree.Encode()
	if err != nil {
		return nil, nil, fmt.Errorf("merge the rows of output %s: %w", out, err)
	}
	h, err := c.Blobs.PutBytes(b)
	if err != nil {
		return nil, nil, fmt.Errorf("merge the rows of output %s: %w", out, err)
	}
	merged := make(map[string]string, len(named))
	for k, v := range named {
		merged[k] = v
	}
	merged[out] = h
	return merged, append(warnings, m.warnings...), nil
}

// readRowIndex reads the index at path in tree: nil when there is none, an error naming it when
// it cannot be used (the rows file then counts as unordered).
func (n *Parents) readRowIndex(tree *snapshot.Manifest, p string) (*rowIndex, error) {
	c := n.c
	i := slices.IndexFunc(tree.Entries, func(e snapshot.Entry) bool { return e.Path == p && e.Type == snapshot.TypeFile })
	if i < 0 {
		return nil, nil
	}
	e := tree.Entries[i]
	if e.Size > maxRowIndexBytes {
		return nil, fmt.Errorf("%s is over %d MiB", path.Base(p), maxRowIndexBytes>>20)
	}
	f, err := c.Blobs.Open(e.Hash)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path.Base(p), err)
	}
	defer f.Close()
	var idx rowIndex
	if err := json.NewDecoder(io.LimitReader(f, maxRowIndexBytes)).Decode(&idx); err != nil {
		return nil, fmt.Errorf("%s: %w", path.Base(p), err)
	}
	return &idx, nil
}

// concatBlobs stores the pieces concatenated as a new blob.
func (n *Parents) concatBlobs(pieces []rowPiece) (string, int64, error) {
	c := n.c
	open := map[string]*os.File{}
	defer func() {
		for _, f := range open {
			f.Close()
		}
	}()
	readers := []io.Reader{}
	for _, p := range pieces {
		f := open[p.hash]
		if f == nil {
			var err error
			if f, err = c.Blobs.Open(p.hash); err != nil {
				return "", 0, err
			}
			open[p.hash] = f
		}
		readers = append(readers, io.NewSectionReader(f, p.offset, p.length))
	}
	return c.Blobs.Put(io.MultiReader(readers...), "")
}
