package pipeline

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/hangar-ml/hangar/internal/job"
)

var update = flag.Bool("update", false, "rewrite testdata/draw/*.txt from Draw's output")

// nested is prep, then a pipeline step "outer" flattened into outer.clean → outer.train with
// outer.eval reading outer.train, then score reading the model.
func nested() job.PipelineRun {
	in := func(s job.PipelineStep) job.PipelineStep { s.Group = "outer"; return s }
	return job.PipelineRun{Steps: map[string]job.PipelineStep{
		"prep":        step(outs("data")),
		"outer.clean": in(step(outs("data"), "raw=prep.data")),
		"outer.train": in(step(outs("model"), "data=outer.clean.data")),
		"outer.eval":  in(step(outs("report"), "model=outer.train.model", "data=outer.clean.data")),
		"score":       step(outs("scores"), "model=outer.train.model", "data=prep.data"),
	}}
}

// fanOut is one source read by ten workers whose results one step joins.
func fanOut() job.PipelineRun {
	p := job.PipelineRun{Steps: map[string]job.PipelineStep{"split": step(outs("shards"))}}
	var joined []string
	for i := 1; i <= 10; i++ {
		name := fmt.Sprintf("featurize_shard_%02d", i)
		p.Steps[name] = step(outs("features"), "shards=split.shards")
		joined = append(joined, fmt.Sprintf("in%02d=%s.features", i, name))
	}
	p.Steps["merge_all_the_featurized_shards_into_one_table"] = step(outs("table"), joined...)
	return p
}

func TestDrawGolden(t *testing.T) {
	tests := []struct {
		name   string
		p      job.PipelineRun
		states map[string]string
	}{
		{"chain", chain(), map[string]string{"prep": "completed", "train": "running"}},
		{"diamond", diamond(), map[string]string{
			"a": "completed (reused from a_run_1)", "b": "completed", "c": "failed", "d": "skipped",
		}},
		{"nested", nested(), map[string]string{
			"prep": "completed", "outer.clean": "completed", "outer.train": "running", "outer.eval": "",
		}},
		{"fanout", fanOut(), map[string]string{
			"split": "completed", "featurize_shard_01": "completed", "featurize_shard_02": "failed",
			"featurize_shard_03": "canceled", "featurize_shard_04": "queued", "featurize_shard_05": "Preparing",
			"featurize_shard_06": "running", "merge_all_the_featurized_shards_into_one_table": "skipped",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := strings.Join(Draw(tt.p, tt.states), "\n") + "\n"
			path := filepath.Join("testdata", "draw", tt.name+".txt")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("read golden (run go test -update to write it): %v", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Fatalf("Draw (-%s +got):\n%s", path, diff)
			}
		})
	}
}

// TestDrawFits draws random graphs with long names and notes: every line fits in 80 columns,
// every step appears once, below every step it reads from.
func TestDrawFits(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		base := randomDAG(rt)
		rename := map[string]string{}
		for name := range base.Steps {
			rename[name] = name + "_" + rapid.StringMatching(`[a-z_]{0,40}`).Draw(rt, "suffix"+name)
		}
		p := job.PipelineRun{Steps: map[string]job.PipelineStep{}}
		states := map[string]string{}
		for name, s := range base.Steps {
			for in, ref := range s.From {
				s.From[in] = job.StepRef{Step: rename[ref.Step], Output: ref.Output}
			}
			p.Steps[rename[name]] = s
			states[rename[name]] = rapid.StringMatching(`(completed( \(reused from [a-z_]{0,40}\))?|running|)`).Draw(rt, "state"+name)
		}
		lines := Draw(p, states)
		markCol := len(fmt.Sprint(len(Layers(p)))) + 2
		row := map[string]int{} // the line each step's row is on, by its (maybe cut) name
		for i, line := range lines {
			if n := utf8.RuneCountInString(line); n > DrawWidth {
				rt.Fatalf("line %d is %d columns: %q", i, n, line)
			}
			if r := []rune(line); r[markCol] != ' ' { // a step's row, not a producer list going on
				row[strings.Fields(string(r[markCol:]))[1]] = i
			}
		}
		if len(row) != len(p.Steps) {
			rt.Fatalf("%d step rows for %d steps:\n%s", len(row), len(p.Steps), strings.Join(lines, "\n"))
		}
		for name, producers := range Deps(p) {
			for _, producer := range producers {
				if row[cut(producer, maxNameWidth)] >= row[cut(name, maxNameWidth)] {
					rt.Fatalf("%s drawn above its producer %s:\n%s", name, producer, strings.Join(lines, "\n"))
				}
			}
		}
	})
}

// TestDrawControlCharacters keeps a state's escape sequences off the terminal.
func TestDrawControlCharacters(t *testing.T) {
	p := job.PipelineRun{Steps: map[string]job.PipelineStep{"prep": step(nil)}}
	got := Draw(p, map[string]string{"prep": "failed\x1b[2J\rok"})
	want := []string{"1  ✗ prep  failed?[2J?ok"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("Draw (-want +got):\n%s", diff)
	}
}
