package spec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/binding"
	"github.com/hangar-ml/hangar/internal/sweep"
)

// Sweeps without a seed in their file get one from RandomSeed; a fixed one keeps the golden
// files stable.
func init() { RandomSeed = func() int64 { return 424242 } }

const sweepBase = `type: sweep
trial:
  command: python train.py --lr ${{search_space.lr}}
  environment: {image: python:3.12}
search_space:
  lr: {type: uniform, min_value: 0.001, max_value: 0.1}
objective: {goal: maximize, primary_metric: acc}
sampling_algorithm: random
`

// Each sweep problem is refused naming the file and the field path.
func TestSweepErrors(t *testing.T) {
	tests := []struct {
		name, yml, want string
	}{
		{"no trial", strings.Replace(sweepBase, "trial:\n  command: python train.py --lr ${{search_space.lr}}\n  environment: {image: python:3.12}\n", "", 1), "sweep.yml: trial: required"},
		{"unknown search-space reference", strings.Replace(sweepBase, "search_space.lr}}", "search_space.lrr}}", 1), "sweep.yml: trial.command: unknown reference ${{search_space.lrr}}"},
		{"unknown trial field", strings.Replace(sweepBase, "  environment:", "  comand: x\n  environment:", 1), `sweep.yml: trial.comand: unknown field; did you mean "command"?`},
		{"min above max", strings.Replace(sweepBase, "max_value: 0.1", "max_value: 0.0001", 1), "search_space.lr.max_value: must be greater than min_value"},
		{"unknown kind", strings.Replace(sweepBase, "type: uniform", "type: uniformm", 1), "search_space.lr.type: expected one of choice"},
		{"choice without values", strings.Replace(sweepBase, "{type: uniform, min_value: 0.001, max_value: 0.1}", "{type: choice}", 1), "search_space.lr.values: required"},
		{"nested choice", strings.Replace(sweepBase, "{type: uniform, min_value: 0.001, max_value: 0.1}", "{type: choice, values: [{a: 1}]}", 1), "search_space.lr.values[0]: nested (conditional) search spaces are not supported"},
		{"randint upper", strings.Replace(sweepBase, "{type: uniform, min_value: 0.001, max_value: 0.1}", "{type: randint, upper: 0}", 1), "search_space.lr.upper: expected integer >= 1"},
		{"normal sigma", strings.Replace(sweepBase, "{type: uniform, min_value: 0.001, max_value: 0.1}", "{type: qnormal, mu: 1, sigma: -1, q: 1}", 1), "search_space.lr.sigma: expected a number > 0"},
		{"grid takes choices only", strings.Replace(sweepBase, "sampling_algorithm: random", "sampling_algorithm: grid", 1), "search_space.lr: grid sampling takes only choice expressions, not uniform"},
		{"bayesian kinds", strings.Replace(sweepBase, "type: uniform", "type: loguniform", 1) + "", ""},
		{"sobol on grid", strings.Replace(sweepBase, "sampling_algorithm: random", "sampling_algorithm: {type: grid, rule: sobol}", 1), "sampling_algorithm.rule: only random sampling takes rule"},
		{"goal", strings.Replace(sweepBase, "goal: maximize", "goal: up", 1), "objective.goal: expected one of maximize, minimize"},
		{"no metric", strings.Replace(sweepBase, ", primary_metric: acc", "", 1), "objective.primary_metric: required"},
		{"too many trials", sweepBase + "limits: {max_total_trials: 1001}\n", "limits.max_total_trials: expected integer <= 1000"},
		{"bandit without slack", sweepBase + "early_termination: {type: bandit}\n", "early_termination.slack_factor: bandit needs slack_factor or slack_amount"},
		{"bandit both slacks", sweepBase + "early_termination: {type: bandit, slack_factor: 0.1, slack_amount: 1}\n", "early_termination.slack_amount: give slack_factor or slack_amount, not both"},
		{"truncation percentage", sweepBase + "early_termination: {type: truncation_selection, truncation_percentage: 100}\n", "early_termination.truncation_percentage: expected integer 1..99"},
		{"slack on median", sweepBase + "early_termination: {type: median_stopping, slack_factor: 0.1}\n", "early_termination.slack_factor: only bandit takes slack_factor"},
		{"bayesian with bandit", strings.Replace(sweepBase, "sampling_algorithm: random", "sampling_algorithm: bayesian", 1) + "early_termination: {type: bandit, slack_factor: 0.1}\n", "early_termination.type: bayesian sampling takes no early termination policy"},
		{"registered component without a name", strings.Replace(sweepBase, "trial:\n  command: python train.py --lr ${{search_space.lr}}\n  environment: {image: python:3.12}\n", "trial: 'azureml:'\n", 1), "sweep.yml: trial: expected azureml:<component>:<version> or azureml:<component>@latest"},
		{"space name is an input", sweepBase + "inputs: {lr: 0.1}\n", `search_space.lr: name "lr" is also used by an input`},
		{"value bash would run", strings.Replace(sweepBase, "--lr ${{search_space.lr}}", "$(( ${{search_space.lr}} ))", 1), "trial.command:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := ParseJob("sweep.yml", []byte(tt.yml), t.TempDir(), nil)
			switch {
			case tt.want == "" && tt.name == "bayesian kinds":
				// loguniform is fine for random sampling.
				if err != nil {
					t.Fatalf("err = %v, want none", err)
				}
			case err == nil:
				t.Fatalf("no error, want %q", tt.want)
			case !strings.Contains(err.Error(), tt.want):
				t.Errorf("err = %v\nwant it to contain %q", err, tt.want)
			}
		})
	}
}

// A trial naming a registered component is kept as written: the server, which has the component,
// binds it (controller.resolveSweepTrial).
func TestSweepRegisteredComponentTrial(t *testing.T) {
	yml := strings.Replace(sweepBase, "trial:\n  command: python train.py --lr ${{search_space.lr}}\n  environment: {image: python:3.12}\n", "trial: azureml:train@latest\n", 1)
	sp, _, err := ParseJob("sweep.yml", []byte(yml), t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if sp.Sweep == nil || sp.Sweep.Trial != "azureml:train@latest" || sp.Command != "" {
		t.Errorf("sweep %+v command %q; want the reference kept for the server", sp.Sweep, sp.Command)
	}
}

// A trial of a component file names the component's file in its problems.
func TestSweepComponentErrors(t *testing.T) {
	dir := t.TempDir()
	comp := "type: command\ninputs:\n  lr: {type: number}\n  data: {type: uri_folder}\ncommand: python t.py --lr ${{inputs.lr}}\n"
	if err := os.WriteFile(filepath.Join(dir, "c.yml"), []byte(comp), 0o644); err != nil {
		t.Fatal(err)
	}
	yml := "type: sweep\ntrial: ./c.yml\nsearch_space: {lr: {type: choice, values: [1, 2]}}\nobjective: {goal: minimize, primary_metric: loss}\nsampling_algorithm: grid\n"
	_, _, err := ParseJob("sweep.yml", []byte(yml), dir, nil)
	if err == nil || !strings.Contains(err.Error(), `sweep.yml: trial: input "data" of c.yml has no default: give inputs.data or search_space.data`) {
		t.Errorf("err = %v, want the missing input named", err)
	}
	yml += "inputs: {data: {type: uri_folder, path: https://example.com/d/}}\n"
	if err := os.WriteFile(filepath.Join(dir, "c.yml"), []byte(comp[:len(comp)-1]+" --x ${{inputs.nope}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = ParseJob("sweep.yml", []byte(yml), dir, nil)
	if err == nil || !strings.Contains(err.Error(), "c.yml: command: unknown reference ${{inputs.nope}}") {
		t.Errorf("err = %v, want the component's command problem named by its file", err)
	}
}

// A trial's values reach its command as data: a choice that is shell code is passed quoted,
// as an input's value is, never run.
func TestTrialSpecBindsValuesAsData(t *testing.T) {
	yml := strings.Replace(sweepBase, "{type: uniform, min_value: 0.001, max_value: 0.1}", `{type: choice, values: ["$(touch /tmp/pwned)", "a b"]}`, 1)
	sp, _, err := ParseJob("sweep.yml", []byte(yml), t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if sp.Sweep.Config.Sampling.Seed != 424242 {
		t.Errorf("seed = %d, want the one chosen when the file gives none", sp.Sweep.Config.Sampling.Seed)
	}
	trial, err := TrialSpec(*sp, sweep.Params{"lr": "$(touch /tmp/pwned)"})
	if err != nil {
		t.Fatal(err)
	}
	if trial.Type != "command" || trial.Sweep != nil || trial.Command != "python train.py --lr ${{inputs.lr}}" {
		t.Fatalf("trial = %s %q, want a command job reading the value as an input", trial.Type, trial.Command)
	}
	got, err := binding.Bind(trial.Command, BindValues(&trial))
	if err != nil {
		t.Fatal(err)
	}
	if want := `python train.py --lr '$(touch /tmp/pwned)'`; got != want {
		t.Errorf("bound %q, want %q", got, want)
	}
	if _, err := TrialSpec(*sp, sweep.Params{"other": 1.0}); err == nil {
		t.Error("a parameter outside the search space was accepted")
	}
}

// A seed the file gives is kept.
func TestSweepSeedFromFile(t *testing.T) {
	yml := strings.Replace(sweepBase, "sampling_algorithm: random", "sampling_algorithm: {type: random, seed: 5, rule: sobol}", 1)
	sp, _, err := ParseJob("sweep.yml", []byte(yml), t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if s := sp.Sweep.Config.Sampling; s.Seed != 5 || s.Rule != "sobol" {
		t.Errorf("sampling = %+v, want seed 5 rule sobol", s)
	}
}
