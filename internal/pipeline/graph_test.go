package pipeline

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/job"
)

// step builds a step that declares outs and reads each "input=producer.output" in from.
func step(outs []string, from ...string) job.PipelineStep {
	s := job.PipelineStep{Spec: job.Spec{Type: "command", Command: "true"}, Deterministic: true}
	if len(outs) > 0 {
		s.Spec.Outputs = map[string]job.Output{}
		for _, o := range outs {
			s.Spec.Outputs[o] = job.Output{Type: job.URIFolder}
		}
	}
	for _, f := range from {
		in, ref, _ := strings.Cut(f, "=")
		dot := strings.LastIndex(ref, ".") // a nested step's name has dots of its own
		producer, out := ref[:max(dot, 0)], ref[dot+1:]
		if s.From == nil {
			s.From = map[string]job.StepRef{}
		}
		s.From[in] = job.StepRef{Step: producer, Output: out}
	}
	return s
}

func outs(names ...string) []string { return names }

// chain is prep → train → score.
func chain() job.PipelineRun {
	return job.PipelineRun{Steps: map[string]job.PipelineStep{
		"prep":  step(outs("data")),
		"train": step(outs("model"), "data=prep.data"),
		"score": step(outs("report"), "model=train.model", "data=prep.data"),
	}, Outputs: map[string]job.StepRef{"report": {Step: "score", Output: "report"}}}
}

// diamond is a → (b, c) → d.
func diamond() job.PipelineRun {
	return job.PipelineRun{Steps: map[string]job.PipelineStep{
		"a": step(outs("o")),
		"b": step(outs("o"), "x=a.o"),
		"c": step(outs("o"), "x=a.o"),
		"d": step(outs("o"), "left=b.o", "right=c.o"),
	}}
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name string
		p    job.PipelineRun
		want string // "" = valid
	}{
		{"chain", chain(), ""},
		{"diamond", diamond(), ""},
		{"single step", job.PipelineRun{Steps: map[string]job.PipelineStep{"only": step(nil)}}, ""},
		{"no steps", job.PipelineRun{}, "jobs: a pipeline needs at least one step"},
		{"unknown step", job.PipelineRun{Steps: map[string]job.PipelineStep{
			"prep":  step(outs("data")),
			"train": step(nil, "data=perp.data"),
		}}, `jobs.train.inputs.data: step "perp" does not exist (steps: prep, train)`},
		{"unknown output", job.PipelineRun{Steps: map[string]job.PipelineStep{
			"prep":  step(outs("data", "stats")),
			"train": step(nil, "data=prep.dataset"),
		}}, `jobs.train.inputs.data: step "prep" has no output "dataset" (outputs: data, stats)`},
		{"producer without outputs", job.PipelineRun{Steps: map[string]job.PipelineStep{
			"prep":  step(nil),
			"train": step(nil, "data=prep.data"),
		}}, `jobs.train.inputs.data: step "prep" declares no outputs, so it has no output "data"`},
		{"empty ref", job.PipelineRun{Steps: map[string]job.PipelineStep{
			"train": step(nil, "data=."),
		}}, `jobs.train.inputs.data: no step named`},
		{"pipeline output unknown step", job.PipelineRun{
			Steps:   map[string]job.PipelineStep{"prep": step(outs("data"))},
			Outputs: map[string]job.StepRef{"model": {Step: "train", Output: "model"}},
		}, `outputs.model: step "train" does not exist (steps: prep)`},
		{"pipeline output unknown output", job.PipelineRun{
			Steps:   map[string]job.PipelineStep{"prep": step(outs("data"))},
			Outputs: map[string]job.StepRef{"clean": {Step: "prep", Output: "clean"}},
		}, `outputs.clean: step "prep" has no output "clean" (outputs: data)`},
		{"two-step cycle", job.PipelineRun{Steps: map[string]job.PipelineStep{
			"prep":  step(outs("data"), "model=train.model"),
			"train": step(outs("model"), "data=prep.data"),
		}}, "jobs: a cycle: prep → train → prep"},
		{"three-step cycle named in data-flow order", job.PipelineRun{Steps: map[string]job.PipelineStep{
			"a":    step(outs("o"), "x=c.o"),
			"b":    step(outs("o"), "x=a.o"),
			"c":    step(outs("o"), "x=b.o"),
			"head": step(outs("o")),
		}}, "jobs: a cycle: a → b → c → a"},
		{"cycle entered from outside starts at its smallest name", job.PipelineRun{Steps: map[string]job.PipelineStep{
			"a": step(outs("o"), "x=z.o"),
			"z": step(outs("o"), "x=y.o"),
			"y": step(outs("o"), "x=z.o"),
		}}, "jobs: a cycle: y → z → y"},
		{"self reference", job.PipelineRun{Steps: map[string]job.PipelineStep{
			"loop": step(outs("o"), "x=loop.o"),
		}}, "jobs: a cycle: loop → loop"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Check(tt.p)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if tt.want == "" && err != nil {
				t.Fatalf("Check: %v, want no error", err)
			}
			if tt.want != "" && !strings.HasPrefix(got, tt.want) {
				t.Fatalf("Check:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestDeps(t *testing.T) {
	got := Deps(chain())
	want := map[string][]string{"prep": nil, "train": {"prep"}, "score": {"prep", "train"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("Deps (-want +got):\n%s", diff)
	}
	// Two inputs from the same producer name it once.
	p := job.PipelineRun{Steps: map[string]job.PipelineStep{
		"prep":  step(outs("a", "b")),
		"train": step(nil, "x=prep.a", "y=prep.b"),
	}}
	if got := Deps(p)["train"]; !cmp.Equal(got, []string{"prep"}) {
		t.Fatalf("Deps[train] = %v, want [prep]", got)
	}
}

func TestOrder(t *testing.T) {
	tests := []struct {
		name string
		p    job.PipelineRun
		want []string
	}{
		{"chain", chain(), []string{"prep", "train", "score"}},
		{"diamond", diamond(), []string{"a", "b", "c", "d"}},
		{"independent steps by name", job.PipelineRun{Steps: map[string]job.PipelineStep{
			"zeta": step(nil), "alpha": step(nil), "mid": step(nil),
		}}, []string{"alpha", "mid", "zeta"}},
		{"a late source comes first", job.PipelineRun{Steps: map[string]job.PipelineStep{
			"a": step(outs("o"), "x=z.o"), "z": step(outs("o")),
		}}, []string{"z", "a"}},
		{"a cycle still lists every step", job.PipelineRun{Steps: map[string]job.PipelineStep{
			"src": step(outs("o")),
			"p":   step(outs("o"), "x=q.o", "s=src.o"),
			"q":   step(outs("o"), "x=p.o"),
		}}, []string{"src", "p", "q"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Order(tt.p)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Fatalf("Order (-want +got):\n%s", diff)
			}
			for i := 0; i < 5; i++ { // map order must not leak into the answer
				if again := Order(tt.p); !cmp.Equal(again, got) {
					t.Fatalf("Order changed between calls: %v then %v", got, again)
				}
			}
		})
	}
}
