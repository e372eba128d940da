package spec

import (
	"testing"

	"github.com/hangar-ml/hangar/internal/compute"
)

const serverlessOK = "type: serverless\nsizes: [local-quarter]\n"

// Mistakes in a serverless pool's file: each names the file, the field path and the line.
func TestParseServerlessErrors(t *testing.T) {
	tests := []struct{ name, yml, want string }{
		{"sizes required", "type: serverless\n",
			"compute.yml: sizes: required: the sizes jobs may ask for, e.g. [Standard_DS3_v2] (hangar sizes list)"},
		{"sizes empty", "type: serverless\nsizes: []\n",
			"compute.yml: sizes: expected a non-empty list of size names like [Standard_DS3_v2], got a list (line 2)"},
		{"size with a space", "type: serverless\nsizes: ['big one']\n",
			`compute.yml: sizes[0]: expected a size name like Standard_DS3_v2, got "big one" (line 2)`},
		{"size with a shell character", "type: serverless\nsizes: ['a;b']\n",
			`compute.yml: sizes[0]: expected a size name of letters, digits, '_' and '-' (at most 64), got "a;b" (line 2)`},
		{"size twice", "type: serverless\nsizes: [local-quarter, LOCAL-QUARTER]\n",
			"compute.yml: sizes[1]: size LOCAL-QUARTER is listed twice (line 2)"},
		{"size mapping without name", "type: serverless\nsizes:\n  - {max_instances: 2}\n",
			"compute.yml: sizes[0].name: required (line 3)"},
		{"size unknown key", "type: serverless\nsizes:\n  - {name: a1, gpus: 2}\n",
			"compute.yml: sizes[0].gpus: unknown field (expected one of: isolated, max_instances, name) (line 3)"},
		{"size bound above the quota", "type: serverless\nmax_instances: 2\nsizes:\n  - {name: a1, max_instances: 3}\n",
			"compute.yml: sizes[0].max_instances: expected at most the pool's max_instances (2), got 3 (line 4)"},
		{"default size not offered", serverlessOK + "default_size: Standard_DS3_v2\n",
			`compute.yml: default_size: expected one of sizes (local-quarter), got "Standard_DS3_v2" (line 3)`},
		{"quota zero", serverlessOK + "max_instances: 0\n",
			"compute.yml: max_instances: expected integer >= 1, got 0 (line 3)"},
		{"another name", "name: pool\n" + serverlessOK,
			`compute.yml: name: the serverless pool is named serverless (or leave name out), got "pool" (line 1)`},
		{"cluster-only key", serverlessOK + "min_instances: 1\n",
			"compute.yml: min_instances: unknown field; did you mean \"max_instances\"? (line 3)"},
		{"provider command without delete", serverlessOK + "provider: {type: command, create: x}\n",
			"compute.yml: provider.delete: required (line 3)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, _, err := parseComputeT(t, tt.yml)
			checkErr(t, err, tt.want)
		})
	}
}

// The pool's defaults: its name, the first size as default size, the quota, the local provider.
func TestParseServerlessDefaults(t *testing.T) {
	s, _, _, err := parseComputeT(t, "type: serverless\nsizes: [local-half, {name: local-quarter, max_instances: 1}]\ndefault_size: LOCAL-QUARTER\n")
	if err != nil {
		t.Fatal(err)
	}
	sl := s.Serverless
	if s.Name != "serverless" || sl == nil || sl.DefaultSize != "local-quarter" || sl.MaxInstances != 4 ||
		sl.Provider.Type != "local" || sl.IdleTimeBeforeScaleDown != 120 || len(sl.Sizes) != 2 || sl.Sizes[1].MaxInstances != 1 {
		t.Fatalf("got %+v %+v", s, sl)
	}
}

// A pipeline may run on serverless compute (issue 17): as its default compute, and per step.
func TestPipelineServerless(t *testing.T) {
	sp, _, err := parsePipeline(t, "type: pipeline\nsettings: {default_compute: azureml:serverless}\n"+
		"jobs:\n  a: {command: echo a}\n  b: {command: echo b, compute: Serverless, resources: {instance_type: local-half}}\n  c: {command: echo c, compute: local}\n")
	if err != nil {
		t.Fatal(err)
	}
	p := sp.Pipeline
	got := map[string]string{"default": p.Settings.DefaultCompute}
	for name, st := range p.Steps {
		got[name] = st.Spec.Compute
	}
	want := map[string]string{"default": "serverless", "a": "serverless", "b": "serverless", "c": "local"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: compute %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
	if it := p.Steps["b"].Spec.Resources.InstanceType; it != "local-half" {
		t.Errorf("b's instance_type = %q", it)
	}
}

// checkServerlessInvariants fails when an accepted serverless pool breaks a rule the parser
// enforces (FuzzParseCompute).
func checkServerlessInvariants(t *testing.T, name string, p *compute.ServerlessSpec) {
	t.Helper()
	if _, ok := p.Size(p.DefaultSize); name != compute.ServerlessName || len(p.Sizes) == 0 || !ok || p.MaxInstances < 1 ||
		p.IdleTimeBeforeScaleDown < 0 || p.ProvisionTimeout <= 0 {
		t.Fatalf("serverless pool %s %+v", name, p)
	}
	for _, z := range p.Sizes {
		if !serverlessSizeName.MatchString(z.Name) || z.MaxInstances < 0 || z.MaxInstances > p.MaxInstances {
			t.Fatalf("serverless size %+v", z)
		}
	}
	if p.Provider.Type == compute.ProviderCommand && (p.Provider.Create == "" || p.Provider.Delete == "" || p.Provider.Timeout <= 0) {
		t.Fatalf("provider %+v", p.Provider)
	}
}
