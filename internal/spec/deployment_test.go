package spec

import (
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/serving"
)

// scoringFiles is a code folder and a model folder, as deployments name them.
var scoringFiles = map[string]string{"src/score.py": "def init(): pass\n", "model/w.json": "{}"}

const minimalDeployment = `name: blue
endpoint_name: my-endpoint
model:
  path: model
code_configuration:
  code: src
  scoring_script: score.py
`

func parseDeployment(t *testing.T, yml string, sets ...string) (*serving.Deployment, []string, string, error) {
	t.Helper()
	dir := writeTree(t, scoringFiles)
	dep, warnings, err := ParseDeployment("dep.yml", []byte(yml), dir, sets)
	return dep, warnings, dir, err
}

// A deployment without the optional sections gets Azure's documented defaults.
func TestDeploymentDefaults(t *testing.T) {
	dep, warnings, dir, err := parseDeployment(t, minimalDeployment)
	if err != nil || len(warnings) > 0 {
		t.Fatalf("err %v, warnings %q", err, warnings)
	}
	probe := serving.Probe{InitialDelay: 10, Period: 10, Timeout: 2, SuccessThreshold: 1, FailureThreshold: 30, Path: "/"}
	want := &serving.Deployment{
		Name: "blue", Endpoint: "my-endpoint",
		Model: serving.ModelRef{Path: "$DIR/model", Type: "custom_model"},
		Code:  "$DIR/src", ScoringScript: "score.py",
		InstanceCount: 1,
		Scale:         serving.ScaleSettings{Type: "default"},
		Request:       serving.RequestSettings{RequestTimeoutMS: 5000, MaxConcurrentRequestsPerInstance: 1, MaxQueueWaitMS: 500},
		Liveness:      probe, Readiness: probe,
	}
	diff(t, normalize(t, dep, dir), want)
}

// Every supported form of the fields that have several, and --set on them.
func TestDeploymentForms(t *testing.T) {
	for _, tc := range []struct {
		name, yml string
		sets      []string
		check     func(t *testing.T, d *serving.Deployment)
	}{
		{"registered model", strings.Replace(minimalDeployment, "model:\n  path: model\n", "model: azureml:my-model:1\n", 1), nil,
			func(t *testing.T, d *serving.Deployment) { diff(t, d.Model, serving.ModelRef{Ref: "my-model:1"}) }},
		{"latest model", strings.Replace(minimalDeployment, "model:\n  path: model\n", "model: azureml:my-model@latest\n", 1), nil,
			func(t *testing.T, d *serving.Deployment) { diff(t, d.Model, serving.ModelRef{Ref: "my-model@latest"}) }},
		{"model from --set", minimalDeployment, []string{"model=azureml:other:3"},
			func(t *testing.T, d *serving.Deployment) { diff(t, d.Model, serving.ModelRef{Ref: "other:3"}) }},
		{"custom container", "name: tfs\nendpoint_name: my-endpoint\nenvironment:\n  image: tensorflow/serving\n  inference_config:\n" +
			"    liveness_route: {path: /live, port: 8501}\n    readiness_route: {path: /ready, port: 8501}\n" +
			"    scoring_route: {path: /v1/models/m:predict, port: 8501}\n", nil,
			func(t *testing.T, d *serving.Deployment) {
				diff(t, d.Inference, &serving.InferenceConfig{LivenessPath: "/live", ReadinessPath: "/ready", ScoringPath: "/v1/models/m:predict", Port: 8501})
				diff(t, []string{d.Liveness.Path, d.Readiness.Path}, []string{"/live", "/ready"})
			}},
		{"target utilization", minimalDeployment + "scale_settings:\n  type: target_utilization\n  min_instances: 0\n  max_instances: 4\n", []string{"scale_settings.scale_down_delay=PT5M"},
			func(t *testing.T, d *serving.Deployment) {
				diff(t, d.Scale, serving.ScaleSettings{Type: "target_utilization", MinInstances: 0, MaxInstances: 4,
					TargetUtilization: 70, PollingInterval: 1, ScaleDownDelay: 300})
			}},
		{"settings over defaults", minimalDeployment + "request_settings:\n  request_timeout_ms: 90000\n  max_concurrent_requests_per_instance: 4\n" +
			"readiness_probe:\n  failure_threshold: 3\n", []string{"instance_count=3", "liveness_probe.period=5"},
			func(t *testing.T, d *serving.Deployment) {
				diff(t, d.Request, serving.RequestSettings{RequestTimeoutMS: 90000, MaxConcurrentRequestsPerInstance: 4, MaxQueueWaitMS: 500})
				diff(t, []int{d.InstanceCount, d.Liveness.Period, d.Readiness.FailureThreshold}, []int{3, 5, 3})
			}},
		{"endpoint from --set", strings.Replace(minimalDeployment, "endpoint_name: my-endpoint\n", "", 1), []string{"endpoint_name=ep-two"},
			func(t *testing.T, d *serving.Deployment) { diff(t, d.Endpoint, "ep-two") }},
		{"kubernetes", "type: kubernetes\ncompute: azureml:k8s\n" + minimalDeployment, nil,
			func(t *testing.T, d *serving.Deployment) { diff(t, d.Compute, "k8s") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dep, _, _, err := parseDeployment(t, tc.yml, tc.sets...)
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, dep)
		})
	}
}

// Mistakes are reported with the file, the field path and the line.
func TestDeploymentErrors(t *testing.T) {
	for _, tc := range []struct {
		name, yml string
		want      []string
	}{
		{"unknown field", minimalDeployment + "instance_cuont: 2\n", []string{`dep.yml: instance_cuont: unknown field; did you mean "instance_count"? (line 8)`}},
		{"name", strings.Replace(minimalDeployment, "name: blue", "name: <blue>", 1), []string{"dep.yml: name: expected a deployment name", "(line 1)"}},
		{"missing name", strings.Replace(minimalDeployment, "name: blue\n", "", 1), []string{"dep.yml: name: required"}},
		{"script outside code", strings.Replace(minimalDeployment, "score.py", "../score.py", 1), []string{"code_configuration.scoring_script: expected a path relative to code_configuration.code, inside it", "(line 7)"}},
		{"script missing", strings.Replace(minimalDeployment, "score.py", "main.py", 1), []string{"code_configuration.scoring_script: main.py does not exist in $DIR/src (line 7)"}},
		{"code missing", strings.Replace(minimalDeployment, "code: src", "code: nope", 1), []string{"code_configuration.code: nope does not exist (line 6)"}},
		{"no script", strings.Replace(minimalDeployment, "  scoring_script: score.py\n", "", 1), []string{"code_configuration.scoring_script: required (line 6)"}},
		{"model path missing", strings.Replace(minimalDeployment, "path: model", "path: nope", 1), []string{"model.path: nope does not exist (line 4)"}},
		{"bare model name", strings.Replace(minimalDeployment, "model:\n  path: model\n", "model: azureml:my-model\n", 1), []string{"model: give a version (my-model:1) or my-model@latest (line 3)"}},
		{"model version", strings.Replace(minimalDeployment, "path: model", "path: model\n  version: v/2", 1), []string{`model.version: expected letters, digits, '.', '_' and '-', starting with a letter or digit (at most 100), like 1 or 0.0.1, got "v/2"`}},
		{"ports differ", "name: tfs\nenvironment:\n  image: x\n  inference_config:\n    liveness_route: {path: /, port: 80}\n" +
			"    readiness_route: {path: /, port: 81}\n    scoring_route: {path: /s, port: 80}\n",
			[]string{"environment.inference_config.readiness_route.port: 81 differs from 80 (line 5): Hangar serves every route of a replica on one port (line 6)"}},
		{"route path", "name: tfs\nenvironment:\n  image: x\n  inference_config:\n    liveness_route: {path: live, port: 80}\n" +
			"    readiness_route: {path: /, port: 80}\n    scoring_route: {path: /s, port: 80}\n",
			[]string{"environment.inference_config.liveness_route.path: expected an HTTP path starting with /"}},
		{"nothing serves", "name: blue\nenvironment:\n  conda_file: {dependencies: [python]}\n", []string{"dep.yml: environment.image: required without code_configuration or command: the image whose entrypoint serves the model, with its inference_config (or give code_configuration or command) (line 3)"}},
		{"image without inference_config", "name: blue\nenvironment:\n  image: x\n", []string{"dep.yml: environment.inference_config: required for an image that serves by its own entrypoint (no code_configuration, no command): its liveness_route, readiness_route and scoring_route (line 3)"}},
		{"route missing", "name: tfs\nenvironment:\n  image: x\n  inference_config:\n    liveness_route: {path: /, port: 80}\n" +
			"    scoring_route: {path: /s, port: 80}\n",
			[]string{"dep.yml: environment.inference_config.readiness_route: required (line 5)"}},
		{"port range", "name: tfs\nenvironment:\n  image: x\n  inference_config:\n    liveness_route: {path: /, port: 0}\n" +
			"    readiness_route: {path: /, port: 70000}\n    scoring_route: {path: /s, port: 80}\n",
			[]string{"dep.yml: environment.inference_config.liveness_route.port: expected integer >= 1, got 0 (line 5)",
				"dep.yml: environment.inference_config.readiness_route.port: expected integer <= 65535, got 70000 (line 6)"}},
		{"route port missing", "name: tfs\nenvironment:\n  image: x\n  inference_config:\n    liveness_route: {path: /}\n" +
			"    readiness_route: {path: /, port: 80}\n    scoring_route: {path: /s, port: 80}\n",
			[]string{"dep.yml: environment.inference_config.liveness_route.port: required (line 5)"}},
		{"mount path", "name: tfs\nmodel_mount_path: models/../x\nenvironment:\n  image: x\n  inference_config:\n    liveness_route: {path: /, port: 80}\n" +
			"    readiness_route: {path: /, port: 80}\n    scoring_route: {path: /s, port: 80}\n",
			[]string{"dep.yml: model_mount_path: expected an absolute, clean path inside the container other than / (no .., no : or ,), got \"models/../x\" (line 2)"}},
		{"no environment", "name: blue\nmodel:\n  path: model\n", []string{"environment: required without code_configuration"}},
		{"command with script", minimalDeployment + "command: python serve.py\n", []string{"command: not with code_configuration"}},
		{"percent scale", minimalDeployment + "scale_settings:\n  type: target_utilization\n  target_utilization_percentage: 120\n", []string{"scale_settings.target_utilization_percentage: expected integer <= 100, got 120 (line 10)"}},
		{"min over max", minimalDeployment + "scale_settings:\n  type: target_utilization\n  min_instances: 3\n  max_instances: 2\n", []string{"scale_settings.min_instances: 3 is more than max_instances (2) (line 10)"}},
		{"default scale bounds", minimalDeployment + "scale_settings:\n  min_instances: 3\n", []string{"scale_settings.min_instances: only with type: target_utilization (line 9)"}},
		{"timeout type", minimalDeployment + "request_settings:\n  request_timeout_ms: \"5s\"\n", []string{"request_settings.request_timeout_ms: expected integer, got \"5s\" (line 9)"}},
		{"liveness success", minimalDeployment + "liveness_probe:\n  success_threshold: 2\n", []string{"liveness_probe.success_threshold: must be 1 for a liveness probe"}},
		{"egress value", minimalDeployment + "egress_public_network_access: off\n", []string{"egress_public_network_access: expected one of enabled, disabled"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, dir, err := parseDeployment(t, tc.yml)
			if err != nil {
				err = errorText(strings.ReplaceAll(err.Error(), dir, "$DIR"))
			}
			checkErr(t, asList(err), tc.want...)
		})
	}
}

// The schema's fields Hangar does not act on are kept, with a warning where Azure would act.
func TestDeploymentUnusedFieldsKept(t *testing.T) {
	dep, warnings, _, err := parseDeployment(t, minimalDeployment+"app_insights_enabled: true\nmodel_mount_path: /models\n"+
		"data_collector:\n  collections:\n    model_inputs: {enabled: 'True'}\negress_public_network_access: disabled\n")
	if err != nil {
		t.Fatal(err)
	}
	diff(t, dep.Extra, map[string]any{
		"app_insights_enabled": true, "model_mount_path": "/models", "egress_public_network_access": "disabled",
		"data_collector": map[string]any{"collections": map[string]any{"model_inputs": map[string]any{"enabled": "True"}}},
	})
	for _, w := range []string{"app_insights_enabled: kept, no effect", "model_mount_path: kept, no effect", "data_collector: kept, no effect", "egress_public_network_access: kept, no effect"} {
		if !strings.Contains(strings.Join(warnings, "\n"), "dep.yml: "+w) {
			t.Errorf("no warning %q in %q", w, warnings)
		}
	}
}

type errorText string

func (e errorText) Error() string { return string(e) }

// asList wraps a rewritten error text so that checkErr accepts it.
func asList(err error) error {
	if err == nil {
		return nil
	}
	return ErrorList{{Msg: err.Error()}}
}
