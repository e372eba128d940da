package spec

import (
	"testing"

	"github.com/hangar-ml/hangar/internal/job"
)

const setBase = `command: python train.py --lr ${{inputs.lr}} --epochs ${{inputs.epochs}} ${{inputs.data}} ${{inputs.name}} ${{inputs.flag}} ${{outputs.model}}
inputs:
  lr: 0.01
  epochs: 3
  name: hello
  flag: true
  data: {type: uri_folder, path: ./data}
outputs:
  model:
resources:
  instance_count: 1
  locations: [westus, eastus]
`

func TestSetValid(t *testing.T) {
	files := map[string]string{"data/": "", "other/": "", "x.csv": "1"}
	tests := []struct {
		name  string
		yml   string
		sets  []string
		check func(s *job.Spec) any
		want  any
	}{
		{"integer", setBase, []string{"inputs.epochs=5"}, func(s *job.Spec) any { return s.Inputs["epochs"] }, job.Input{Type: "integer", Value: "5"}},
		{"number from int keeps type", setBase, []string{"inputs.lr=1"}, func(s *job.Spec) any { return s.Inputs["lr"] }, job.Input{Type: "number", Value: "1"}},
		{"string accepts number", setBase, []string{"inputs.name=5"}, func(s *job.Spec) any { return s.Inputs["name"] }, job.Input{Type: "string", Value: "5"}},
		{"bool", setBase, []string{"inputs.flag=false"}, func(s *job.Spec) any { return s.Inputs["flag"] }, job.Input{Type: "boolean", Value: "false"}},
		{"data path convenience", setBase, []string{"inputs.data=./other"}, func(s *job.Spec) any { return s.Inputs["data"].Path }, "$DIR/other"},
		{"data mode", setBase, []string{"inputs.data.mode=Download"}, func(s *job.Spec) any { return s.Inputs["data"].Mode }, "download"},
		{"data replaced by flow mapping", setBase, []string{"inputs.data={type: uri_file, path: ./x.csv}"}, func(s *job.Spec) any { return s.Inputs["data"] },
			job.Input{Type: "uri_file", Mode: "ro_mount", Path: "$DIR/x.csv"}},
		{"literal object value", "command: run ${{inputs.lr}}\ninputs:\n  lr: {type: number, default: 0.1}\n", []string{"inputs.lr=0.5"},
			func(s *job.Spec) any { return s.Inputs["lr"] }, job.Input{Type: "number", Value: "0.5"}},
		{"null output becomes mapping", setBase, []string{"outputs.model.mode=upload"}, func(s *job.Spec) any { return s.Outputs["model"] }, job.Output{Type: "uri_folder", Mode: "upload"}},
		{"create compute", setBase, []string{"compute=gpu"}, func(s *job.Spec) any { return s.Compute }, "gpu"},
		{"create limits", setBase, []string{"limits.timeout=60"}, func(s *job.Spec) any { return s.Limits.TimeoutSeconds }, int64(60)},
		{"create tags", setBase, []string{"tags.x=hello", "tags.n=1"}, func(s *job.Spec) any { return s.Tags }, map[string]string{"x": "hello", "n": "1"}},
		{"create env var", setBase, []string{"environment_variables.A=1"}, func(s *job.Spec) any { return s.EnvironmentVariables }, map[string]string{"A": "1"}},
		{"create environment", setBase, []string{"environment.image=python:3.12"}, func(s *job.Spec) any { return s.Environment }, job.Environment{Image: "python:3.12"}},
		{"replace environment ref", "command: x\nenvironment: azureml:a:1\n", []string{"environment=b@latest"}, func(s *job.Spec) any { return s.Environment.Ref }, "b@latest"},
		{"list index", setBase, []string{"resources.locations[1]=northeurope"}, func(s *job.Spec) any { return s.Resources.Locations }, []string{"westus", "northeurope"}},
		{"command with spaces", setBase, []string{"command=python -c 'print(1)' ${{inputs.lr}}"}, func(s *job.Spec) any { return s.Command }, "python -c 'print(1)' ${{inputs.lr}}"},
		{"text that looks like a mapping", setBase, []string{"description=a: b"}, func(s *job.Spec) any { return s.Description }, "a: b"},
		{"later set wins", setBase, []string{"inputs.epochs=5", "inputs.epochs=7"}, func(s *job.Spec) any { return s.Inputs["epochs"].Value }, "7"},
		{"empty value", setBase, []string{"inputs.name="}, func(s *job.Spec) any { return s.Inputs["name"] }, job.Input{Type: "string"}},
		{"empty file", "", []string{"command=echo hi"}, func(s *job.Spec) any { return s.Command }, "echo hi"},
		{"distribution created", setBase, []string{"distribution.type=pytorch", "distribution.process_count_per_instance=4"},
			func(s *job.Spec) any { return s.Distribution }, &job.Distribution{Type: "pytorch", ProcessCountPerInstance: 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _, dir, err := parseJob(t, tt.yml, files, tt.sets...)
			if err != nil {
				t.Fatalf("unexpected error:\n%v", err)
			}
			diff(t, tt.check(normalize(t, s, dir)), tt.want)
		})
	}
}

func TestSetErrors(t *testing.T) {
	files := map[string]string{"data/": ""}
	tests := []struct {
		name string
		yml  string
		set  string
		want string
	}{
		{"no equals", setBase, "inputs.lr", "job.yml: --set inputs.lr: expected key.path=value"},
		{"empty path", setBase, "=1", "job.yml: --set =1: expected key.path=value"},
		{"empty segment", setBase, "inputs..lr=1", "job.yml: --set inputs..lr=1: expected key.path=value"},
		{"bad index", setBase, "resources.locations[x]=1", "job.yml: --set resources.locations[x]=1: expected key.path=value"},
		{"no such top key", setBase, "commnd=x", `job.yml: --set commnd: no such key; did you mean "command"?`},
		{"no such nested key", setBase, "resources.instance_cont=2", `job.yml: --set resources.instance_cont: no such key; did you mean "instance_count"? (resources has: instance_count, locations)`},
		{"not a number", setBase, "inputs.lr=abc", `job.yml: inputs.lr: expected number, got "abc" (from --set)`},
		{"not an integer", setBase, "inputs.epochs=1.5", "job.yml: inputs.epochs: expected integer, got 1.5 (from --set)"},
		{"not a boolean", setBase, "inputs.flag=maybe", `job.yml: inputs.flag: expected boolean, got "maybe" (from --set)`},
		{"not an integer field", setBase, "resources.instance_count=two", `job.yml: resources.instance_count: expected integer, got "two" (from --set)`},
		{"created field validated", setBase, "limits.timeout=ten", `job.yml: limits.timeout: expected integer seconds, got "ten" (from --set)`},
		{"parent not mapping", "command: x\nenvironment: azureml:a:1\n", "environment.image=x", "job.yml: --set environment.image: environment is not a mapping"},
		{"input scalar not mapping", setBase, "inputs.name.mode=download", "job.yml: --set inputs.name.mode: inputs.name is not a mapping"},
		{"index out of range", setBase, "resources.locations[5]=x", "job.yml: --set resources.locations[5]: no such index (resources.locations has 2 items)"},
		{"index on a mapping", setBase, "resources[0]=x", "job.yml: --set resources[0]: resources is not a list"},
		{"literal object type", "command: run ${{inputs.lr}}\ninputs:\n  lr: {type: integer, default: 1}\n", "inputs.lr=0.5", "job.yml: inputs.lr.value: expected integer, got 0.5 (from --set)"},
		{"data path missing", setBase, "inputs.data=./missing", "job.yml: inputs.data.path: ./missing does not exist (from --set)"},
		{"bad flow mapping type", setBase, "inputs.data={type: uri_file, path: ./data}", "job.yml: inputs.data.path: ./data is a directory; uri_file needs a file (use type: uri_folder) (from --set)"},
		{"created mapping needs type", setBase, "distribution.process_count_per_instance=2", "job.yml: distribution.type: required (from --set)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, _, err := parseJob(t, tt.yml, files, tt.set)
			checkErr(t, err, tt.want)
		})
	}
}

func TestParseSetPath(t *testing.T) {
	tests := []struct {
		in   string
		want string
		ok   bool
	}{
		{"a", "a", true},
		{"a.b.c", "a.b.c", true},
		{"a.b[1]", "a.b[1]", true},
		{"a[0][2].b", "a[0][2].b", true},
		{"", "", false},
		{"a.", "", false},
		{"a[", "", false},
		{"a[-1]", "", false},
		{"a[1]x", "", false},
		{"[1]", "", false},
	}
	for _, tt := range tests {
		segs, ok := parseSetPath(tt.in)
		if ok != tt.ok || (ok && fieldPath(segs) != tt.want) {
			t.Errorf("parseSetPath(%q) = %q, %v; want %q, %v", tt.in, fieldPath(segs), ok, tt.want, tt.ok)
		}
	}
}

// Every key --set may create must be one the decoder knows.
func TestSetKeysAreKnown(t *testing.T) {
	base := "command: x\ninputs: {e: {path: data}, l: {type: number, default: 1}}\noutputs: {e2: }\nservices: {e3: {type: ssh}}\n"
	literalOnly := map[string]bool{"inputs.{}.default": true, "inputs.{}.value": true, "inputs.{}.min": true, "inputs.{}.max": true}
	for _, pat := range jobKeys {
		set := pat
		if literalOnly[pat] {
			set = replaceFirst(set, "inputs.{}", "inputs.l")
		}
		for _, r := range [][2]string{{"inputs.{}", "inputs.e"}, {"outputs.{}", "outputs.e2"}, {"services.{}", "services.e3"}, {"*", "k"}} {
			set = replaceFirst(set, r[0], r[1])
		}
		t.Run(set, func(t *testing.T) {
			_, _, _, err := parseJob(t, base, map[string]string{"data/": ""}, set+"=1")
			if err != nil && (contains(err.Error(), "unknown field") || contains(err.Error(), "no such key")) {
				t.Errorf("--set %s=1: %v", set, err)
			}
		})
	}
}

// --set adds a key to a mapping that has others, as az's does: a new input, output or step
// entry is added, with a warning that names it (a misspelt name is added too).
func TestSetAddsEntries(t *testing.T) {
	pipeline := "type: pipeline\ninputs: {a: 1}\njobs:\n  s:\n    command: echo ${{inputs.a}}\n    inputs: {a: 1}\n    environment_variables: {A: b}\n"
	tests := []struct {
		name    string
		yml     string
		set     string
		check   func(s *job.Spec) any
		want    any
		warning string
	}{
		{"new input", setBase, "inputs.nope=1", func(s *job.Spec) any { return s.Inputs["nope"] }, job.Input{Type: "integer", Value: "1"},
			`job.yml: --set inputs.nope: adds an input "nope" (inputs had: lr, epochs, name, flag, data)`},
		{"new output", setBase, "outputs.extra.mode=upload", func(s *job.Spec) any { return s.Outputs["extra"].Mode }, "upload",
			`job.yml: --set outputs.extra: adds an output "extra" (outputs had: model)`},
		{"tag beside another", "command: x\ntags: {a: b}\n", "tags.c=d", func(s *job.Spec) any { return s.Tags }, map[string]string{"a": "b", "c": "d"}, ""},
		{"step's environment variable beside another", pipeline, "jobs.s.environment_variables.C=2",
			func(s *job.Spec) any { return s.Pipeline.Steps["s"].Spec.EnvironmentVariables }, map[string]string{"A": "b", "C": "2"}, ""},
		{"step's new input", pipeline, "jobs.s.inputs.b=2", func(s *job.Spec) any { return s.Pipeline.Steps["s"].Spec.Inputs["b"].Value }, "2",
			`job.yml: --set jobs.s.inputs.b: adds an input "b" (jobs.s.inputs had: a)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, warnings, _, err := parseJob(t, tt.yml, map[string]string{"data/": ""}, tt.set)
			if err != nil {
				t.Fatalf("--set %s: %v", tt.set, err)
			}
			diff(t, tt.check(s), tt.want)
			found := tt.warning == ""
			for _, w := range warnings {
				found = found || w == tt.warning
			}
			if !found {
				t.Errorf("warnings %q, want %q", warnings, tt.warning)
			}
		})
	}
}
