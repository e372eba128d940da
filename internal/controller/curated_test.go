package controller

import (
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/curated"
	"github.com/hangar-ml/hangar/internal/job"
)

const sklearnRegistry = "azureml://registries/azureml/environments/sklearn-1.5/labels/latest"

// warned says whether one of the run's warnings holds every part.
func warned(r *job.Run, parts ...string) bool {
	for _, w := range r.Warnings {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(w, p)
		}
		if all {
			return true
		}
	}
	return false
}

// A job that names a curated environment runs in what the mapping says: the defaults on a fresh
// workspace (scikit-learn on the node's Python), an owner's mapping once set (a registered
// environment, resolved at each job), and the host environment with a warning that says how
// to map a name nothing maps.
func TestCuratedEnvironmentMapping(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()

	r := f.create(t, job.Spec{Environment: job.Environment{Ref: sklearnRegistry}})
	if e := r.Spec.Environment; e.InterpreterPath != curated.SystemPython || e.Ref != sklearnRegistry {
		t.Errorf("the default mapping of sklearn-1.5: %+v", e)
	}
	if !warned(r, "curated sklearn-1.5", "interpreter /usr/bin/python3", "mapping sklearn-*") {
		t.Errorf("warnings %q do not say what the curated name runs in", r.Warnings)
	}

	r = f.create(t, job.Spec{Environment: job.Environment{Ref: "AzureML-AutoML@latest"}})
	if e := r.Spec.Environment; e.Ref != "AzureML-AutoML@latest" || e.Image != "" || e.InterpreterPath != "" || e.RequirementsText != "" {
		t.Errorf("an unmapped curated name: %+v, want the host environment", e)
	}
	if !warned(r, "no mapping", "runs in the host environment", "hangar curated-environment set AzureML-AutoML --environment") {
		t.Errorf("warnings %q do not say how to map AzureML-AutoML", r.Warnings)
	}

	if _, err := f.c.Workspace.Environments.Create(ctx, job.Environment{Name: "team-sklearn", Image: "registry.example/sklearn:1.5"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.c.Workspace.Environments.SetCurated(ctx, curated.Mapping{Name: "SKLEARN-1.5", Environment: job.Environment{Ref: "team-sklearn"}}); err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{sklearnRegistry, "AzureML-sklearn-1.5@latest", "azureml-sklearn-1.5:3"} {
		r = f.create(t, job.Spec{Environment: job.Environment{Ref: ref}})
		if e := r.Spec.Environment; e.Image != "registry.example/sklearn:1.5" || e.Ref != ref {
			t.Errorf("%s after the owner's mapping: %+v", ref, e)
		}
	}
	if r = f.create(t, job.Spec{Environment: job.Environment{Ref: "azureml://registries/azureml/environments/sklearn-1.0/labels/latest"}}); r.Spec.Environment.InterpreterPath != curated.SystemPython {
		t.Errorf("sklearn-1.0 still takes the default: %+v", r.Spec.Environment)
	}
}

// What an owner's mapping may name, and removing mappings and defaults.
func TestCuratedEnvironmentSetAndRemove(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	for _, tc := range []struct {
		m     curated.Mapping
		parts []string
	}{
		{curated.Mapping{Name: "sklearn-1.5:2", Environment: job.Environment{Image: "x"}}, []string{"name:", "without a version"}},
		{curated.Mapping{Name: "sklearn-1.5"}, []string{"environment: give a registered environment"}},
		{curated.Mapping{Name: "sklearn-1.5", Environment: job.Environment{Ref: "ghost"}}, []string{"no environment ghost in this workspace"}},
		{curated.Mapping{Name: "sklearn-1.5", Environment: job.Environment{Ref: "AzureML-sklearn-1.0"}}, []string{"not an environment of this workspace"}},
		{curated.Mapping{Name: "sklearn-1.5", Environment: job.Environment{Ref: "azureml://registries/azureml/environments/x/labels/latest"}}, []string{"not an environment of this workspace"}},
	} {
		_, err := f.c.Workspace.Environments.SetCurated(ctx, tc.m)
		wantKind(t, err, Invalid, tc.parts...)
	}

	own := curated.Mapping{Name: "sklearn-*", Environment: job.Environment{Image: "sk:1"}, Description: "ours"}
	if _, err := f.c.Workspace.Environments.SetCurated(ctx, own); err != nil {
		t.Fatal(err)
	}
	ms, err := f.c.Workspace.Environments.Curated(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := curated.Match(ms, "sklearn-1.5"); m.Builtin || m.Environment.Image != "sk:1" {
		t.Errorf("the owner's sklearn-* does not replace the default: %+v", m)
	}
	// Removing the owner's mapping brings the default back; removing the default unmaps the name.
	if m, err := f.c.Workspace.Environments.RemoveCurated(ctx, "SKLEARN-*"); err != nil || !m.Builtin || m.Environment.InterpreterPath != curated.SystemPython {
		t.Errorf("remove the owner's sklearn-*: %+v, %v; want the default back", m, err)
	}
	if m, err := f.c.Workspace.Environments.RemoveCurated(ctx, "sklearn-*"); err != nil || !m.Removed {
		t.Errorf("remove the default sklearn-*: %+v, %v", m, err)
	}
	r := f.create(t, job.Spec{Environment: job.Environment{Ref: sklearnRegistry}})
	if r.Spec.Environment.InterpreterPath != "" || !warned(r, "no mapping") {
		t.Errorf("sklearn-1.5 with its default removed: %+v, %q", r.Spec.Environment, r.Warnings)
	}
	ms, _ = f.c.Workspace.Environments.Curated(ctx)
	if i := indexOf(ms, "sklearn-*"); i < 0 || !ms[i].Removed || !ms[i].Builtin {
		t.Errorf("the list does not show the removed default: %+v", ms)
	}
	_, err = f.c.Workspace.Environments.RemoveCurated(ctx, "sklearn-*")
	wantKind(t, err, Conflict, "removed already")
	_, err = f.c.Workspace.Environments.RemoveCurated(ctx, "nothing-*")
	wantKind(t, err, NotFound, "no mapping of curated environments named nothing-*")
	if _, err := f.c.Workspace.Environments.SetCurated(ctx, curated.Mapping{Name: "sklearn-*", Environment: job.Environment{InterpreterPath: "/opt/py/bin/python"}}); err != nil {
		t.Fatal(err)
	}
	if r := f.create(t, job.Spec{Environment: job.Environment{Ref: sklearnRegistry}}); r.Spec.Environment.InterpreterPath != "/opt/py/bin/python" {
		t.Errorf("mapped again: %+v", r.Spec.Environment)
	}
}

func indexOf(ms []curated.Mapping, name string) int {
	for i, m := range ms {
		if m.Name == name {
			return i
		}
	}
	return -1
}

// The names Azure reserves are refused as registered environments, and the error says how to
// map the curated name instead (the warning of an unmapped one says the same).
func TestCuratedNameReservedSaysHowToMap(t *testing.T) {
	f := newFixture(t)
	_, err := f.c.Workspace.Environments.Create(t.Context(), job.Environment{Name: "AzureML-sklearn-1.0-ubuntu20.04-py38-cpu", Image: "x"})
	wantKind(t, err, Invalid, "reserved for Azure's curated environments",
		"hangar curated-environment set AzureML-sklearn-1.0-ubuntu20.04-py38-cpu --environment <your name>")
}
