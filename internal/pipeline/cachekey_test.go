package pipeline

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/sweep"
)

// drawStep draws a cacheable step reading "data" from another step, with the binding the
// pipeline loop would pass.
func drawStep(rt *rapid.T) (job.PipelineStep, map[string]job.Input) {
	word := rapid.StringMatching(`[a-z]{1,8}`)
	hash := rapid.StringMatching(`[0-9a-f]{64}`)
	sp := job.Spec{
		Type:        rapid.SampledFrom([]string{"command", "parallel"}).Draw(rt, "type"),
		Name:        word.Draw(rt, "name"),
		DisplayName: word.Draw(rt, "display"),
		Command:     "python " + word.Draw(rt, "script") + ".py --lr ${{inputs.lr}}",
		Code:        "/home/me/" + word.Draw(rt, "code"),
		Environment: job.Environment{Image: "python:3." + word.Draw(rt, "py"), CondaSpec: "deps: " + word.Draw(rt, "conda")},
		Compute:     word.Draw(rt, "compute"),
		Inputs: map[string]job.Input{
			"lr":  {Type: job.InputNumber, Value: fmt.Sprint(rapid.Float64Range(0, 1).Draw(rt, "lr"))},
			"raw": {Type: job.URIFolder, Path: "/data/raw", Manifest: hash.Draw(rt, "raw")},
			"web": {Type: job.URIFile, Path: "https://example.com/" + word.Draw(rt, "url")},
		},
		Outputs:              map[string]job.Output{"model": {Type: job.MLflowModel}, "logs": {}},
		EnvironmentVariables: map[string]string{"A": word.Draw(rt, "a"), "B": word.Draw(rt, "b")},
		Resources:            job.Resources{InstanceCount: rapid.IntRange(1, 4).Draw(rt, "count")},
		Limits:               job.Limits{TimeoutSeconds: rapid.Int64Range(0, 100).Draw(rt, "timeout")},
	}
	sp.CodeSnapshot = hash.Draw(rt, "snapshot")
	if rapid.Bool().Draw(rt, "distributed") {
		sp.Distribution = &job.Distribution{Type: "pytorch", ProcessCountPerInstance: 2}
	}
	step := job.PipelineStep{
		Spec: sp, Deterministic: true, Component: "train:" + word.Draw(rt, "version"),
		From: map[string]job.StepRef{"data": {Step: "prep", Output: "out"}},
	}
	bound := map[string]job.Input{"data": {Type: job.URIFolder, Manifest: hash.Draw(rt, "data")}}
	return step, bound
}

// cloneStep copies every map so a change to the copy leaves the original alone.
func cloneStep(s job.PipelineStep, bound map[string]job.Input) (job.PipelineStep, map[string]job.Input) {
	s.Spec.Inputs = maps.Clone(s.Spec.Inputs)
	s.Spec.Outputs = maps.Clone(s.Spec.Outputs)
	s.Spec.EnvironmentVariables = maps.Clone(s.Spec.EnvironmentVariables)
	s.Spec.Tags = maps.Clone(s.Spec.Tags)
	s.From = maps.Clone(s.From)
	if s.Spec.Distribution != nil {
		d := *s.Spec.Distribution
		s.Spec.Distribution = &d
	}
	return s, maps.Clone(bound)
}

type change struct {
	name  string
	apply func(*job.PipelineStep, map[string]job.Input)
}

// coveredChanges each change what a step computes, so each must change the key.
var coveredChanges = []change{
	{"type", func(s *job.PipelineStep, _ map[string]job.Input) { s.Spec.Type = "sweep" }},
	{"command", func(s *job.PipelineStep, _ map[string]job.Input) { s.Spec.Command += " --epochs 2" }},
	{"code snapshot", func(s *job.PipelineStep, _ map[string]job.Input) { s.Spec.CodeSnapshot += "0" }},
	{"image", func(s *job.PipelineStep, _ map[string]job.Input) { s.Spec.Environment.Image += "-slim" }},
	{"conda spec", func(s *job.PipelineStep, _ map[string]job.Input) { s.Spec.Environment.CondaSpec += "\n- numpy" }},
	{"pip text", func(s *job.PipelineStep, _ map[string]job.Input) { s.Spec.Environment.RequirementsText = "torch" }},
	{"registered environment", func(s *job.PipelineStep, _ map[string]job.Input) {
		s.Spec.Environment.Name, s.Spec.Environment.Version = "torch", "3"
	}},
	{"distribution", func(s *job.PipelineStep, _ map[string]job.Input) {
		if s.Spec.Distribution == nil {
			s.Spec.Distribution = &job.Distribution{Type: "mpi"}
		} else {
			s.Spec.Distribution.ProcessCountPerInstance++
		}
	}},
	{"instance count", func(s *job.PipelineStep, _ map[string]job.Input) { s.Spec.Resources.InstanceCount++ }},
	{"environment variable value", func(s *job.PipelineStep, _ map[string]job.Input) { s.Spec.EnvironmentVariables["A"] += "x" }},
	{"environment variable added", func(s *job.PipelineStep, _ map[string]job.Input) { s.Spec.EnvironmentVariables["C"] = "" }},
	{"literal value", func(s *job.PipelineStep, _ map[string]job.Input) {
		in := s.Spec.Inputs["lr"]
		in.Value += "1"
		s.Spec.Inputs["lr"] = in
	}},
	{"literal type", func(s *job.PipelineStep, _ map[string]job.Input) {
		in := s.Spec.Inputs["lr"]
		in.Type = job.InputString
		s.Spec.Inputs["lr"] = in
	}},
	{"data manifest", func(s *job.PipelineStep, _ map[string]job.Input) {
		in := s.Spec.Inputs["raw"]
		in.Manifest += "0"
		s.Spec.Inputs["raw"] = in
	}},
	{"data uri", func(s *job.PipelineStep, _ map[string]job.Input) {
		in := s.Spec.Inputs["web"]
		in.Path += "/v2"
		s.Spec.Inputs["web"] = in
	}},
	{"input mode", func(s *job.PipelineStep, _ map[string]job.Input) {
		in := s.Spec.Inputs["raw"]
		in.Mode = "direct"
		s.Spec.Inputs["raw"] = in
	}},
	{"input added", func(s *job.PipelineStep, _ map[string]job.Input) {
		s.Spec.Inputs["seed"] = job.Input{Type: job.InputInteger, Value: "1"}
	}},
	{"input renamed", func(s *job.PipelineStep, _ map[string]job.Input) {
		s.Spec.Inputs["rate"] = s.Spec.Inputs["lr"]
		delete(s.Spec.Inputs, "lr")
	}},
	{"bound input's manifest", func(_ *job.PipelineStep, b map[string]job.Input) {
		in := b["data"]
		in.Manifest += "0"
		b["data"] = in
	}},
	{"output added", func(s *job.PipelineStep, _ map[string]job.Input) { s.Spec.Outputs["metrics"] = job.Output{} }},
	{"output type", func(s *job.PipelineStep, _ map[string]job.Input) {
		s.Spec.Outputs["model"] = job.Output{Type: job.CustomModel}
	}},
	{"parallel settings", func(s *job.PipelineStep, _ map[string]job.Input) {
		s.Spec.Parallel = &job.ParallelRun{MiniBatchSize: 10}
	}},
	{"sweep settings", func(s *job.PipelineStep, _ map[string]job.Input) {
		s.Spec.Sweep = &job.SweepRun{Config: sweep.Config{Objective: sweep.Objective{Metric: "acc", Goal: "maximize"}}}
	}},
}

// uncoveredChanges leave what a step computes alone, so none may change the key.
var uncoveredChanges = []change{
	{"name", func(s *job.PipelineStep, _ map[string]job.Input) { s.Spec.Name += "2" }},
	{"display name", func(s *job.PipelineStep, _ map[string]job.Input) { s.Spec.DisplayName += " (again)" }},
	{"description", func(s *job.PipelineStep, _ map[string]job.Input) { s.Spec.Description = "why" }},
	{"experiment", func(s *job.PipelineStep, _ map[string]job.Input) { s.Spec.ExperimentName = "other" }},
	{"tags", func(s *job.PipelineStep, _ map[string]job.Input) { s.Spec.Tags = map[string]string{"team": "x"} }},
	{"properties", func(s *job.PipelineStep, _ map[string]job.Input) { s.Spec.Properties = map[string]string{"p": "1"} }},
	{"compute", func(s *job.PipelineStep, _ map[string]job.Input) { s.Spec.Compute += "-gpu" }},
	{"instance type", func(s *job.PipelineStep, _ map[string]job.Input) { s.Spec.Resources.InstanceType = "Standard_NC6" }},
	{"shm size", func(s *job.PipelineStep, _ map[string]job.Input) { s.Spec.Resources.ShmSize = "8g" }},
	{"limits", func(s *job.PipelineStep, _ map[string]job.Input) { s.Spec.Limits.TimeoutSeconds += 60 }},
	{"queue settings", func(s *job.PipelineStep, _ map[string]job.Input) { s.Spec.QueueSettings.Priority = "high" }},
	{"code folder path", func(s *job.PipelineStep, _ map[string]job.Input) { s.Spec.Code += "-moved" }},
	{"component name", func(s *job.PipelineStep, _ map[string]job.Input) { s.Component = "other:1" }},
	{"group", func(s *job.PipelineStep, _ map[string]job.Input) { s.Group = "outer" }},
	{"from reference", func(s *job.PipelineStep, _ map[string]job.Input) {
		s.From["data"] = job.StepRef{Step: "clean", Output: "out"}
	}},
	{"environment description", func(s *job.PipelineStep, _ map[string]job.Input) { s.Spec.Environment.Description = "d" }},
	{"conda file path", func(s *job.PipelineStep, _ map[string]job.Input) { s.Spec.Environment.CondaFile = "/tmp/conda.yml" }},
	{"input description", func(s *job.PipelineStep, _ map[string]job.Input) {
		in := s.Spec.Inputs["raw"]
		in.Description, in.Datastore = "raw data", "workspaceblobstore"
		s.Spec.Inputs["raw"] = in
	}},
	{"uploaded input's local path", func(s *job.PipelineStep, _ map[string]job.Input) {
		in := s.Spec.Inputs["raw"]
		in.Path = "/elsewhere/raw"
		s.Spec.Inputs["raw"] = in
	}},
	{"default mode spelled out", func(s *job.PipelineStep, _ map[string]job.Input) {
		in := s.Spec.Inputs["raw"]
		in.Mode = "ro_mount"
		s.Spec.Inputs["raw"] = in
	}},
	{"output destination", func(s *job.PipelineStep, _ map[string]job.Input) {
		s.Spec.Outputs["model"] = job.Output{Type: job.MLflowModel, Path: "azureml://datastores/x/paths/y", Name: "m", Mode: "upload"}
	}},
}

func mustKey(t interface{ Fatalf(string, ...any) }, s job.PipelineStep, b map[string]job.Input) string {
	key, ok := CacheKey(s, b)
	if !ok {
		t.Fatalf("CacheKey of a cacheable step: false")
	}
	return key
}

func TestCacheKeyCoversWhatChangesTheResult(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		s, b := drawStep(rt)
		base := mustKey(rt, s, b)
		for _, c := range coveredChanges {
			s2, b2 := cloneStep(s, b)
			c.apply(&s2, b2)
			if got := mustKey(rt, s2, b2); got == base {
				rt.Fatalf("changing the %s kept the key %s", c.name, base)
			}
		}
		for _, c := range uncoveredChanges {
			s2, b2 := cloneStep(s, b)
			c.apply(&s2, b2)
			if got := mustKey(rt, s2, b2); got != base {
				rt.Fatalf("changing the %s changed the key", c.name)
			}
		}
		if again := mustKey(rt, s, b); again != base {
			rt.Fatalf("the key changed between calls (a change leaked into the original?)")
		}
	})
}

// TestCacheKeyMapOrder builds the same step's maps in another insertion order, and as the
// decoder's spec and the loop's binding split differently: the key must not move.
func TestCacheKeyMapOrder(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		s, b := drawStep(rt)
		base := mustKey(rt, s, b)
		s2, b2 := cloneStep(s, b)
		s2.Spec.Inputs = reinsert(s.Spec.Inputs, rt)
		s2.Spec.EnvironmentVariables = reinsert(s.Spec.EnvironmentVariables, rt)
		s2.Spec.Outputs = reinsert(s.Spec.Outputs, rt)
		if got := mustKey(rt, s2, b2); got != base {
			rt.Fatalf("reordered maps changed the key")
		}
		// A literal the caller passes among the bound inputs is the same input.
		s3, b3 := cloneStep(s, b)
		b3["lr"] = s3.Spec.Inputs["lr"]
		delete(s3.Spec.Inputs, "lr")
		if got := mustKey(rt, s3, b3); got != base {
			rt.Fatalf("an input passed bound rather than in the spec changed the key")
		}
	})
}

// reinsert copies m inserting its keys in a drawn order.
func reinsert[V any](m map[string]V, rt *rapid.T) map[string]V {
	keys := slices.Sorted(maps.Keys(m))
	keys = rapid.Permutation(keys).Draw(rt, "order")
	out := make(map[string]V, len(m))
	for _, k := range keys {
		out[k] = m[k]
	}
	return out
}

func TestCacheKeyNotCacheable(t *testing.T) {
	base := job.PipelineStep{
		Spec: job.Spec{
			Type: "command", Command: "python train.py", Code: "/src", CodeSnapshot: "abc",
			Inputs: map[string]job.Input{"raw": {Type: job.URIFolder, Path: "/data", Manifest: "def"}},
		},
		From:          map[string]job.StepRef{"data": {Step: "prep", Output: "out"}},
		Deterministic: true,
	}
	bound := map[string]job.Input{"data": {Type: job.URIFolder, Manifest: "123"}}
	if _, ok := CacheKey(base, bound); !ok {
		t.Fatalf("the base step is not cacheable")
	}
	tests := []struct {
		name  string
		apply func(*job.PipelineStep, map[string]job.Input)
	}{
		{"is_deterministic false", func(s *job.PipelineStep, _ map[string]job.Input) { s.Deterministic = false }},
		{"code not uploaded", func(s *job.PipelineStep, _ map[string]job.Input) { s.Spec.CodeSnapshot = "" }},
		{"local data not uploaded", func(s *job.PipelineStep, _ map[string]job.Input) {
			s.Spec.Inputs["raw"] = job.Input{Type: job.URIFolder, Path: "/data"}
		}},
		{"a from input not bound", func(_ *job.PipelineStep, b map[string]job.Input) { delete(b, "data") }},
		{"a bound input with no manifest", func(_ *job.PipelineStep, b map[string]job.Input) {
			b["data"] = job.Input{Type: job.URIFolder}
		}},
		{"conda file not read", func(s *job.PipelineStep, _ map[string]job.Input) { s.Spec.Environment.CondaFile = "/c.yml" }},
		{"pip file not read", func(s *job.PipelineStep, _ map[string]job.Input) { s.Spec.Environment.Requirements = "/r.txt" }},
		{"a build context", func(s *job.PipelineStep, _ map[string]job.Input) { s.Spec.Environment.BuildPath = "/ctx" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, b := cloneStep(base, bound)
			tt.apply(&s, b)
			if key, ok := CacheKey(s, b); ok || key != "" {
				t.Fatalf("CacheKey = %q, %v; want \"\", false", key, ok)
			}
		})
	}
}

// TestCacheKeyStable pins one key, so a change to the encoding is a deliberate one (bump
// cacheKeyVersion: stored keys from before must stop matching).
func TestCacheKeyStable(t *testing.T) {
	s := job.PipelineStep{Spec: job.Spec{
		Type: "command", Command: "echo hi",
		Environment: job.Environment{Name: "py", Version: "1", Image: "python:3.12"},
		Inputs:      map[string]job.Input{"n": {Type: job.InputInteger, Value: "3"}},
		Outputs:     map[string]job.Output{"out": {}},
	}, Deterministic: true}
	got := mustKey(t, s, nil)
	const want = "162fa44a9dad3641a2067558d1c182718b878e00db7bdc700a27e1369e62c10e"
	if got != want {
		t.Fatalf("CacheKey = %s, want %s", got, want)
	}
}
