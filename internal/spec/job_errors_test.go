package spec

import "testing"

// One case per kind of user mistake: the message must name the file, the field path,
// what was expected and the line.
func TestParseJobErrors(t *testing.T) {
	files := map[string]string{
		"data/x.csv": "1", "src/main.py": "", "conda.yml": "dependencies: [python\n", "list.yml": "- a\n",
		"ctx/": "", "reqs/": "",
	}
	for _, tt := range jobErrorTests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, _, err := parseJob(t, tt.yml, files)
			checkErr(t, err, tt.want)
		})
	}
}

var jobErrorTests = []struct {
	name string
	yml  string
	want string
}{
	// YAML shape
	{"malformed yaml", "command: [a\n", "job.yml: line 1: malformed YAML: did not find expected ',' or ']'"},
	{"top level list", "- a\n", "job.yml: line 1: expected a mapping at the top level, got a list"},
	{"two documents", "command: a\n---\ncommand: b\n", "job.yml: line 2: malformed YAML: found more than one YAML document; expected one"},
	{"duplicate key", "command: a\ncommand: b\n", "job.yml: command: duplicate key (line 2)"},
	{"non-string key", "command: a\n[x]: 1\n", "job.yml: line 2: expected a string key, got a list"},
	{"unknown field suggestion", "commnd: x\n", `job.yml: commnd: unknown field; did you mean "command"? (line 1)`},
	{"unknown nested field", "command: x\nlimits: {foo: 1}\n", "job.yml: limits.foo: unknown field (expected one of: timeout) (line 2)"},
	{"unknown field via anchor", "defaults: &d {a: 1}\ncommand: x\n", `job.yml: defaults: unknown field (line 1)`},
	// top-level fields
	{"command required", "name: x\n", "job.yml: command: required"},
	{"command empty", "command: '  '\n", "job.yml: command: must not be empty (line 1)"},
	{"command list", "command: [a]\n", "job.yml: command: expected a shell command (a string), got a list (line 1)"},
	{"command mapping", "command: {a: 1}\n", "job.yml: command: expected a shell command (a string), got a mapping (line 1)"},
	{"command number", "command: 123\n", `job.yml: command: expected a shell command (a string), got the integer 123; quote it ("123") if you mean that text (line 1)`},
	{"command boolean", "command: true\n", `job.yml: command: expected a shell command (a string), got the boolean true; quote it ("true") if you mean that text (line 1)`},
	{"command float", "command: 1.5\n", `job.yml: command: expected a shell command (a string), got the number 1.5; quote it ("1.5") if you mean that text (line 1)`},
	{"unsupported type", "type: automl\ncommand: x\n", "job.yml: type: job type automl is not supported yet (line 1)"},
	{"pipeline without jobs", "type: Pipeline\n", "job.yml: jobs: required"},
	{"pipeline with a command", "type: pipeline\ncommand: x\njobs: {a: {command: echo}}\n", "job.yml: command: unknown field (line 2)"},
	{"unknown type", "type: foo\ncommand: x\n", `job.yml: type: expected one of command, sweep, pipeline, parallel, automl, spark, got "foo" (line 1)`},
	{"bad job name", "name: -x\ncommand: x\n", `job.yml: name: expected a name of letters, digits, _ and - starting with a letter or digit (at most 255), got "-x" (line 1)`},
	{"display name mapping", "display_name: {a: 1}\ncommand: x\n", "job.yml: display_name: expected a string, got a mapping (line 1)"},
	{"tags nested", "command: x\ntags: {a: {b: 1}}\n", "job.yml: tags.a: expected a scalar value, got a mapping (line 2)"},
	{"properties list", "command: x\nproperties: [a]\n", "job.yml: properties: expected a mapping, got a list (line 2)"},
	{"env var nested", "command: x\nenvironment_variables:\n  A: [1]\n", "job.yml: environment_variables.A: expected a scalar value, got a list (line 3)"},
	{"env var bad name", "command: x\nenvironment_variables: {'A=B': 1}\n", `job.yml: environment_variables.A=B: invalid environment variable name "A=B": expected a letter or _ then letters, digits or _, as a shell variable's name (line 2)`},
	{"env var starting with a digit", "command: x\nenvironment_variables: {1BAD: 1}\n", `job.yml: environment_variables.1BAD: invalid environment variable name "1BAD": expected a letter or _ then letters, digits or _, as a shell variable's name (line 2)`},
	{"env var with a dot", "command: x\nenvironment_variables: {a.b: 1}\n", `job.yml: environment_variables.a.b: invalid environment variable name "a.b"`},
	{"secret in BASH_ENV", "command: x\nenvironment_variables: {BASH_ENV: '${{secrets.k}}'}\n", `job.yml: environment_variables.BASH_ENV: ${{secrets.k}} would be put in BASH_ENV, a variable whose value is code (bash expands it and runs the file it names when a script starts), so no secret is safe there; give the secret to a variable of another name (line 2)`},
	{"secret in LD_PRELOAD", "command: x\nenvironment_variables: {LD_PRELOAD: 'x${{secrets.k}}'}\n", `job.yml: environment_variables.LD_PRELOAD: ${{secrets.k}} would be put in LD_PRELOAD`},
	// compute and code
	{"compute arm id", "command: x\ncompute: azureml:/subscriptions/1/resourceGroups/g/providers/Microsoft.MachineLearningServices/workspaces/w/computes/c\n",
		"job.yml: compute: ARM resource ids are not supported by this workspace; use azureml:<name> (line 2)"},
	{"compute bad name", "command: x\ncompute: 'bad name'\n", `job.yml: compute: expected a compute name like azureml:cpu-cluster, local or serverless, got "bad name" (line 2)`},
	{"code missing", "command: x\ncode: ./nope\n", "job.yml: code: ./nope does not exist (line 2)"},
	{"additional_includes in a job", "command: x\nadditional_includes: [src]\n", "job.yml: additional_includes: a component's field (Azure's command jobs take none)"},
	{"code git", "command: x\ncode: git+https://github.com/a/b\n", "job.yml: code: git code (git+https://github.com/a/b) is not supported yet; use a local directory (line 2)"},
	{"code remote", "command: x\ncode: azureml://datastores/ds/paths/src\n", "job.yml: code: remote code (azureml://datastores/ds/paths/src) is not supported yet"},
	{"code legacy without local_path", "command: x\ncode: {path: src}\n", `job.yml: code.path: unknown field (expected one of: local_path) (line 2)`},
	// environment
	{"env bad ref", "command: x\nenvironment: 'a b:1'\n", `job.yml: environment: expected an environment reference like azureml:<name>:<version> or azureml:<name>@latest, or an inline environment, got "a b:1" (line 2)`},
	{"env list", "command: x\nenvironment: [a]\n", "job.yml: environment: expected an environment reference or an inline environment, got a list (line 2)"},
	{"env unknown field", "command: x\nenvironment: {imag: python}\n", `job.yml: environment.imag: unknown field; did you mean "image"? (line 2)`},
	{"env image and build", "command: x\nenvironment:\n  image: a\n  build: {path: ctx}\n", "job.yml: environment.build: image and build are mutually exclusive (line 4)"},
	{"env conda missing", "command: x\nenvironment: {image: a, conda_file: env.yml}\n", "job.yml: environment.conda_file: env.yml does not exist (line 2)"},
	{"env conda malformed", "command: x\nenvironment: {image: a, conda_file: conda.yml}\n", "job.yml: environment.conda_file: conda.yml: malformed YAML: line 1: did not find expected ',' or ']' (line 2)"},
	{"env conda not mapping", "command: x\nenvironment: {conda_file: list.yml}\n", "job.yml: environment.conda_file: list.yml: expected a conda environment (a YAML mapping) (line 2)"},
	{"env conda uri", "command: x\nenvironment: {conda_file: 'https://x/conda.yml'}\n", `job.yml: environment.conda_file: expected a local file, got URI "https://x/conda.yml" (line 2)`},
	{"env requirements dir", "command: x\nenvironment: {requirements: reqs}\n", "job.yml: environment.requirements: reqs is not a regular file (line 2)"},
	{"env build path required", "command: x\nenvironment: {build: {dockerfile_path: D}}\n", "job.yml: environment.build.path: required (line 2)"},
	{"env build no dockerfile", "command: x\nenvironment:\n  build: {path: ctx}\n", "job.yml: environment.build.path: Dockerfile does not exist in ctx (line 3)"},
	{"env build named dockerfile", "command: x\nenvironment:\n  build:\n    path: ctx\n    dockerfile_path: gpu.Dockerfile\n", "job.yml: environment.build.dockerfile_path: gpu.Dockerfile does not exist in ctx (line 5)"},
	{"env os type", "command: x\nenvironment: {image: a, os_type: mac}\n", `job.yml: environment.os_type: expected one of linux, windows, got "mac" (line 2)`},
	{"env umd not bool", "command: x\nenvironment: {user_managed_dependencies: 'yes'}\n", `job.yml: environment.user_managed_dependencies: expected boolean, got "yes" (line 2)`},
	// literal inputs
	{"input number", "command: x\ninputs:\n  lr: {type: number, default: abc}\n", `job.yml: inputs.lr.default: expected number, got "abc" (line 3)`},
	{"input not integral", "command: x\ninputs:\n  n: {type: integer, value: 2.5}\n", "job.yml: inputs.n.value: expected integer, got 2.5 (line 3)"},
	{"input quoted integer", "command: x\ninputs:\n  n: {type: integer, value: '2'}\n", `job.yml: inputs.n.value: expected integer, got "2" (line 3)`},
	{"input boolean", "command: x\ninputs:\n  b: {type: boolean, default: 1}\n", "job.yml: inputs.b.default: expected boolean, got 1 (line 3)"},
	{"input no value", "command: x\ninputs:\n  s: {type: string}\n", "job.yml: inputs.s: default or value required (or optional: true) (line 3)"},
	{"input above max", "command: x\ninputs:\n  n: {type: integer, default: 20, max: 10}\n", "job.yml: inputs.n.default: 20 is above max 10 (line 3)"},
	{"input below min", "command: x\ninputs:\n  n:\n    type: number\n    min: 0.5\n    value: 0.1\n", "job.yml: inputs.n.value: 0.1 is below min 0.5 (line 6)"},
	{"input enum", "command: x\ninputs:\n  s: {type: string, default: x, enum: [a, b]}\n", `job.yml: inputs.s.default: "x" is not one of the enum values (a, b) (line 3)`},
	{"input min on string", "command: x\ninputs:\n  s: {type: string, default: x, min: 1}\n", "job.yml: inputs.s.min: only allowed for integer and number inputs (line 3)"},
	{"input bad type", "command: x\ninputs:\n  d: {type: folder, path: data}\n", `job.yml: inputs.d.type: expected one of string, integer, number, boolean, uri_folder, uri_file, mltable, mlflow_model, custom_model, triton_model, got "folder" (line 3)`},
	{"input null", "command: x\ninputs:\n  d:\n", "job.yml: inputs.d: expected a value or an input object, got null (line 3)"},
	{"input list", "command: x\ninputs:\n  d: [1]\n", "job.yml: inputs.d: expected a value or an input object, got a list (line 3)"},
	{"input bad name", "command: x\ninputs:\n  1x: 1\n", `job.yml: inputs.1x: name "1x" must start with a letter or _ and hold only letters, digits and _ (line 3)`},
	{"input reserved name", "command: x\ninputs:\n  PATH: 1\n", `job.yml: inputs.PATH: name "PATH" is reserved (reserved: path, ld_library_path, user, logname, home, pwd, shell) (line 3)`},
	{"input optional not bool", "command: x\ninputs:\n  s: {type: string, optional: maybe}\n", `job.yml: inputs.s.optional: expected boolean, got "maybe" (line 3)`},
	// data inputs
	{"data path required", "command: x\ninputs:\n  d: {type: uri_file}\n", "job.yml: inputs.d.path: required (line 3)"},
	{"data missing", "command: x\ninputs:\n  data:\n    type: uri_file\n    path: ./missing.csv\n", "job.yml: inputs.data.path: ./missing.csv does not exist (line 5)"},
	{"data file is dir", "command: x\ninputs:\n  d: {type: uri_file, path: data}\n", "job.yml: inputs.d.path: data is a directory; uri_file needs a file (use type: uri_folder) (line 3)"},
	{"data folder is file", "command: x\ninputs:\n  d: {path: data/x.csv}\n", "job.yml: inputs.d.path: data/x.csv is a file; uri_folder needs a directory (use type: uri_file) (line 3)"},
	{"data mode matrix", "command: x\ninputs:\n  d: {path: data, mode: eval_mount}\n", "job.yml: inputs.d.mode: mode eval_mount is not allowed for a uri_folder input (allowed: ro_mount, download, direct) (line 3)"},
	{"data mode rw", "command: x\ninputs:\n  d: {path: data, mode: rw_mount}\n", "job.yml: inputs.d.mode: mode rw_mount is not allowed for a uri_folder input"},
	{"data mode unknown", "command: x\ninputs:\n  d: {path: data, mode: fast}\n", `job.yml: inputs.d.mode: expected one of ro_mount, download, direct, got "fast" (line 3)`},
	{"data unknown field", "command: x\ninputs:\n  d: {path: data, default: 1}\n", "job.yml: inputs.d.default: unknown field"},
	{"data path empty", "command: x\ninputs:\n  d: {path: ''}\n", `job.yml: inputs.d.path: expected a path or URI, got "" (line 3)`},
	// outputs
	{"output mode matrix", "command: x\noutputs:\n  o: {mode: direct}\n", "job.yml: outputs.o.mode: mode direct is not allowed for a uri_folder output (allowed: rw_mount, upload) (line 3)"},
	{"output input mode", "command: x\noutputs:\n  o: {type: uri_file, mode: ro_mount}\n", "job.yml: outputs.o.mode: mode ro_mount is not allowed for a uri_file output"},
	{"output local path", "command: x\noutputs:\n  o: {path: ./out}\n", `job.yml: outputs.o.path: expected an azureml://datastores/<datastore>/paths/<path> URI or an object store's URI (s3://, gs://, wasbs://, abfss://), got "./out" (line 3)`},
	{"output path expression", "command: x\noutputs:\n  o: {path: 'azureml://datastores/ds/paths/${{inputs.x}}'}\n", "job.yml: outputs.o.path: ${{inputs.x}} is not allowed here (use ${{name}}, ${{output_name}} or ${{default_datastore}}) (line 3)"},
	{"output scalar", "command: x\noutputs:\n  o: ./out\n", `job.yml: outputs.o: expected an output object or nothing, got "./out" (line 3)`},
	{"output type", "command: x\noutputs:\n  o: {type: string}\n", `job.yml: outputs.o.type: expected one of uri_folder, uri_file, mltable, mlflow_model, custom_model, triton_model, got "string" (line 3)`},
	{"output name clash", "command: x\ninputs: {a: 1}\noutputs:\n  a:\n", `job.yml: outputs.a: name "a" is also used by an input (line 4)`},
	{"output reserved", "command: x\noutputs:\n  home:\n", `job.yml: outputs.home: name "home" is reserved`},
	// command references
	{"unknown reference", "command: run ${{inputs.nope}}\ninputs: {x: 1}\noutputs: {y: }\n", "job.yml: command: unknown reference ${{inputs.nope}}; known: inputs.x, outputs.y (line 1)"},
	{"unknown reference none", "command: run ${{outputs.m}}\n", "job.yml: command: unknown reference ${{outputs.m}}; known: none declared (line 1)"},
	{"search space", "command: run ${{search_space.lr}}\n", "job.yml: command: ${{search_space.lr}} is only allowed in sweep/pipeline jobs (line 1)"},
	{"parent", "command: run ${{parent.inputs.x}}\n", "job.yml: command: ${{parent.inputs.x}} is only allowed in sweep/pipeline jobs (line 1)"},
	{"other context", "command: run ${{name}}\n", "job.yml: command: unknown expression ${{name}}; expected inputs.<name> or outputs.<name> (line 1)"},
	{"optional outside segment", "command: run --lr ${{inputs.lr}}\ninputs:\n  lr: {type: number, optional: true}\n", "job.yml: command: optional input ${{inputs.lr}} must be used inside $[[ ... ]] (line 1)"},
	{"unterminated expression", "command: run ${{inputs.x\n", "job.yml: command: unterminated ${{ (missing }}) (line 1)"},
	{"malformed expression", "command: run ${{ a b }}\n", "job.yml: command: malformed expression ${{ a b }} (line 1)"},
	{"unterminated segment", "command: run $[[--x\n", "job.yml: command: unterminated $[[ (missing ]]) (line 1)"},
	{"nested segment", "command: run $[[ $[[ ]] ]]\n", "job.yml: command: nested $[[ is not allowed (line 1)"},
	{"backquotes", "command: echo `cat ${{inputs.x}}`\ninputs: {x: a}\n", "job.yml: command: ${{inputs.x}} inside backquotes is not supported; use $( ) instead (line 1)"},
	{"after dollar", "command: echo $${{inputs.x}}\ninputs: {x: a}\n", "job.yml: command: ${{inputs.x}} directly after $ is not supported (line 1)"},
	// limits and resources
	{"timeout word", "command: x\nlimits:\n  timeout: ten\n", `job.yml: limits.timeout: expected integer seconds, got "ten" (line 3)`},
	{"timeout quoted", "command: x\nlimits: {timeout: '3600'}\n", `job.yml: limits.timeout: expected integer seconds, got "3600" (line 2)`},
	{"timeout zero", "command: x\nlimits: {timeout: 0}\n", "job.yml: limits.timeout: expected integer seconds > 0, got 0 (line 2)"},
	{"timeout float", "command: x\nlimits: {timeout: 1.5}\n", "job.yml: limits.timeout: expected integer seconds, got 1.5 (line 2)"},
	{"timeout iso months", "command: x\nlimits: {timeout: P1M}\n", `job.yml: limits.timeout: expected integer seconds, got "P1M" (line 2)`},
	{"instance count zero", "command: x\nresources: {instance_count: 0}\n", "job.yml: resources.instance_count: expected integer >= 1, got 0 (line 2)"},
	{"instance count word", "command: x\nresources: {instance_count: two}\n", `job.yml: resources.instance_count: expected integer, got "two" (line 2)`},
	{"shm size", "command: x\nresources: {shm_size: 8GB}\n", `job.yml: resources.shm_size: expected a size like 2g (digits then b, k, m or g), got "8GB" (line 2)`},
	{"locations item", "command: x\nresources:\n  locations: [a, {b: 1}]\n", "job.yml: resources.locations[1]: expected a string, got a mapping (line 3)"},
	{"locations scalar", "command: x\nresources: {locations: westus}\n", `job.yml: resources.locations: expected a list of strings, got "westus" (line 2)`},
	// distribution, queue, identity, services
	{"distribution type required", "command: x\ndistribution: {process_count_per_instance: 2}\n", "job.yml: distribution.type: required (line 2)"},
	{"distribution bad type", "command: x\ndistribution: {type: horovod}\n", `job.yml: distribution.type: expected one of pytorch, mpi, tensorflow, ray, got "horovod" (line 2)`},
	{"distribution process count", "command: x\ndistribution: {type: mpi, process_count_per_instance: 0}\n", "job.yml: distribution.process_count_per_instance: expected integer >= 1, got 0 (line 2)"},
	{"distribution wrong key", "command: x\ndistribution: {type: pytorch, worker_count: 2}\n", "job.yml: distribution.worker_count: unknown field (expected one of: process_count_per_instance, type) (line 2)"},
	{"distribution ps count", "command: x\ndistribution: {type: tensorflow, parameter_server_count: -1}\n", "job.yml: distribution.parameter_server_count: expected integer >= 0, got -1 (line 2)"},
	{"ray port", "command: x\ndistribution: {type: ray, port: 70000}\n", "job.yml: distribution.port: expected a port number <= 65535, got 70000 (line 2)"},
	{"job tier", "command: x\nqueue_settings: {job_tier: gold}\n", `job.yml: queue_settings.job_tier: expected one of spot, basic, standard, premium, got "gold" (line 2)`},
	{"priority", "command: x\nqueue_settings: {priority: 3}\n", "job.yml: queue_settings.priority: expected one of low, medium, high, got 3 (line 2)"},
	{"identity type required", "command: x\nidentity: {client_id: a}\n", "job.yml: identity.type: required (line 2)"},
	{"identity managed only", "command: x\nidentity: {type: user_identity, client_id: a}\n", "job.yml: identity.client_id: only allowed for type: managed (line 2)"},
	{"service scalar", "command: x\nservices: {a: b}\n", `job.yml: services.a: expected a service mapping, got "b" (line 2)`},
	{"service unknown key", "command: x\nservices:\n  a: {typ: ssh}\n", `job.yml: services.a.typ: unknown field; did you mean "type"? (line 3)`},
}
