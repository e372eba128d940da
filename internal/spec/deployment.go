package spec

import (
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/model"
	"github.com/hangar-ml/hangar/internal/pattern"
	"github.com/hangar-ml/hangar/internal/serving"
)

// deploymentName is Azure's deployment name rule as its REST API states it, bounded to 32
// characters like endpoint names: it is a header value and a path segment.
var deploymentName = pattern.New(`^[a-zA-Z0-9][a-zA-Z0-9_-]{0,31}$`)

// Azure's documented defaults for online deployments.
const (
	defaultRequestTimeoutMS = 5000
	defaultMaxConcurrent    = 1
	defaultMaxQueueWaitMS   = 500
)

// defaultProbe is Azure's ProbeSettings default: initial_delay 10, period 10, timeout 2,
// success_threshold 1, failure_threshold 30.
var defaultProbe = serving.Probe{InitialDelay: 10, Period: 10, Timeout: 2, SuccessThreshold: 1, FailureThreshold: 30}

// deploymentReadOnly are what `az ml online-deployment show -o yaml` prints.
var deploymentReadOnly = []string{"id", "provisioning_state"}

// deploymentKeys are the keys --set may create in an online deployment file.
var deploymentKeys = append([]string{
	"name", "type", "endpoint_name", "description", "tags.*", "properties.*",
	"model", "model.path", "model.type", "model.name", "model.version", "model_mount_path",
	"code_configuration.code", "code_configuration.scoring_script",
	"environment_variables.*", "instance_type", "instance_count", "compute", "command",
	"scale_settings.type", "scale_settings.min_instances", "scale_settings.max_instances",
	"scale_settings.polling_interval", "scale_settings.target_utilization_percentage",
	"scale_settings.scale_down_delay",
	"request_settings.request_timeout_ms", "request_settings.max_concurrent_requests_per_instance",
	"request_settings.max_queue_wait_ms",
	"app_insights_enabled", "egress_public_network_access",
}, append(append(prefixed("liveness_probe.", probeKeys), prefixed("readiness_probe.", probeKeys)...),
	prefixed("environment.", envKeys)...)...)

var probeKeys = []string{"initial_delay", "period", "timeout", "success_threshold", "failure_threshold"}

// ParseDeploymentFile reads an online deployment YAML (Azure's managedOnlineDeployment and
// kubernetesOnlineDeployment schemas) with the same rules as ParseJobFile. Relative paths
// (model, code, conda file) resolve against the file's folder and are returned absolute.
// endpoint_name may be absent: the CLI then takes it from --endpoint-name.
func ParseDeploymentFile(file string, sets []string, opts ...FileOption) (*serving.Deployment, []string, error) {
	return parseFile(ParseDeployment, file, sets, opts...)
}

// ParseDeployment is ParseDeploymentFile for YAML already read.
func ParseDeployment(file string, data []byte, baseDir string, sets []string, opts ...FileOption) (*serving.Deployment, []string, error) {
	d, root := begin(file, data, baseDir, sets, deploymentKeys, opts...)
	if root == nil {
		return nil, d.warnings, d.errs.err()
	}
	dep := &serving.Deployment{
		InstanceCount: 1,
		Scale:         serving.ScaleSettings{Type: serving.ScaleDefault},
		Request: serving.RequestSettings{RequestTimeoutMS: defaultRequestTimeoutMS,
			MaxConcurrentRequestsPerInstance: defaultMaxConcurrent, MaxQueueWaitMS: defaultMaxQueueWaitMS},
		Liveness:  defaultProbe,
		Readiness: defaultProbe,
	}
	got := d.mapping(root, "", d.serving.deploymentFields(dep))
	d.serving.checkDeployment(got, dep)
	return result(d, dep)
}

// deploymentFields is the online deployment's field table.
func (d *servingDecoder) deploymentFields(dep *serving.Deployment) fields {
	str := func(dst *string) func(*yaml.Node, string) {
		return func(n *yaml.Node, p string) { *dst = d.str(n, p) }
	}
	fs := fields{
		"$schema":               nil,
		"type":                  func(n *yaml.Node, p string) { d.enum(n, p, onlineTypes...) },
		"name":                  str(&dep.Name),
		"endpoint_name":         str(&dep.Endpoint),
		"model":                 func(n *yaml.Node, p string) { dep.Model = d.deploymentModel(n, p, dep) },
		"code_configuration":    func(n *yaml.Node, p string) { d.codeConfiguration(n, p, dep) },
		"environment":           func(n *yaml.Node, p string) { dep.Environment = d.deploymentEnvironment(n, p, dep) },
		"environment_variables": func(n *yaml.Node, p string) { dep.EnvironmentVariables = d.jobs.envVars(n, p) },
		"instance_type":         str(&dep.InstanceType),
		"instance_count":        func(n *yaml.Node, p string) { dep.InstanceCount, _ = d.boundedInt(n, p, 0, 1000) },
		"compute":               func(n *yaml.Node, p string) { dep.Compute = d.jobs.compute(n, p) },
		"command":               func(n *yaml.Node, p string) { dep.Command = d.text(n, p, "a shell command (a string)") },
		"scale_settings":        func(n *yaml.Node, p string) { d.scaleSettings(n, p, &dep.Scale) },
		"request_settings":      func(n *yaml.Node, p string) { d.requestSettings(n, p, &dep.Request) },
		"liveness_probe":        func(n *yaml.Node, p string) { d.probe(n, p, &dep.Liveness, true) },
		"readiness_probe":       func(n *yaml.Node, p string) { d.probe(n, p, &dep.Readiness, false) },
	}
	d.meta(fs, &dep.Meta)
	d.unusedDeploymentFields(fs, dep)
	for _, f := range deploymentReadOnly {
		fs[f] = func(n *yaml.Node, p string) { d.warnf(n, p, "read-only field ignored") }
	}
	return fs
}

// checkDeploymentNames checks a deployment's name (required) and its endpoint's (when given):
// Azure's rules, online and batch alike (its REST API's).
func (d *servingDecoder) checkDeploymentNames(got map[string]*yaml.Node, name, endpoint string) {
	switch n := got["name"]; {
	case n == nil:
		d.required(nil, "name")
	case name != "" && !deploymentName.MatchString(name):
		d.expected(n, "name", "a deployment name of 1 to 32 letters, digits, _ and -, starting with a letter or digit")
	}
	if n := got["endpoint_name"]; n != nil && endpoint != "" && !endpointName.MatchString(endpoint) {
		d.expected(n, "endpoint_name", "an endpoint name of 3 to 32 letters, digits and -, starting with a letter")
	}
}

// checkDeployment applies the rules between a deployment's fields.
func (d *servingDecoder) checkDeployment(got map[string]*yaml.Node, dep *serving.Deployment) {
	d.checkDeploymentNames(got, dep.Name, dep.Endpoint)
	if got["command"] != nil && dep.ScoringScript != "" {
		d.errorf(got["command"], "command", "not with code_configuration: the scoring script is served by Hangar's scoring server")
	}
	if dep.Inference != nil {
		dep.Liveness.Path, dep.Readiness.Path = dep.Inference.LivenessPath, dep.Inference.ReadinessPath
	}
	for _, p := range []*serving.Probe{&dep.Liveness, &dep.Readiness} {
		if p.Path == "" {
			p.Path = "/" // the scoring server's route for both, as in Azure's inference server
		}
	}
	d.checkServes(got, dep)
}

// mlflowEnvironmentWarning is the warning of a no-code MLflow deployment without environment.
const mlflowEnvironmentWarning = "not given: the model's requirements.txt (else its conda.yaml) is the environment of Hangar's built-in MLflow scorer: " +
	"the node's python3 where it has every library they name, else a managed environment pip builds from the node's package index (the run's log says which); give environment to choose"

// checkServes checks that the deployment has something that serves: a scoring script, a
// command that listens on $PORT, or an image that serves by its own entrypoint where its
// inference_config says.
func (d *servingDecoder) checkServes(got map[string]*yaml.Node, dep *serving.Deployment) {
	d.checkModelMount(got, dep)
	if dep.ScoringScript != "" || got["code_configuration"] != nil || dep.Command != "" {
		return
	}
	env := dep.Environment
	switch {
	case dep.Model.Ref != "" && got["environment"] == nil:
		// A registered model's type is known to the workspace only: an MLflow or Triton
		// model needs no environment in Azure (a no-code deployment); the server decides.
	case dep.Model.Type == model.MLflowModel:
		if got["environment"] == nil {
			d.warnf(got["model"], "environment", "%s", mlflowEnvironmentWarning)
		}
	case dep.Model.Type == model.TritonModel:
		if env.Image == "" && env.Ref == "" {
			d.warnf(got["model"], "model.type", "a %s without code_configuration is a no-code deployment, which Hangar does not serve yet; the workspace refuses it", dep.Model.Type)
		}
	case got["environment"] == nil:
		d.errorf(nil, "environment", "required without code_configuration or command: an image with an inference_config that serves the model (or give code_configuration)")
	case env.Ref != "":
		// A registered environment (a model package's) is the workspace's to judge.
	case env.Image == "":
		d.errorf(got["environment"], "environment.image", "required without code_configuration or command: the image whose entrypoint serves the model, with its inference_config (or give code_configuration or command)")
	case dep.Inference == nil:
		d.errorf(got["environment"], "environment.inference_config", "required for an image that serves by its own entrypoint (no code_configuration, no command): its liveness_route, readiness_route and scoring_route")
	}
}

// checkModelMount keeps model_mount_path where it takes effect (an image that serves by its own
// entrypoint finds the model there), else keeps it aside with a warning.
func (d *servingDecoder) checkModelMount(got map[string]*yaml.Node, dep *serving.Deployment) {
	if dep.ModelMountPath == "" || dep.ServesByEntrypoint() {
		return
	}
	keep(&dep.Extra, "model_mount_path", dep.ModelMountPath)
	dep.ModelMountPath = ""
	d.warnf(got["model_mount_path"], "model_mount_path", "kept, no effect: the model is at $AZUREML_MODEL_DIR, not at this path (only an image that serves by its own entrypoint gets it mounted there)")
}

// mountPath decodes an absolute path inside a container: clean, not "/", no control characters.
func (d *servingDecoder) mountPath(n *yaml.Node, path string) string {
	s := d.str(n, path)
	if s == "" {
		return ""
	}
	if !strings.HasPrefix(s, "/") || s == "/" || filepath.ToSlash(filepath.Clean(s)) != s ||
		strings.ContainsFunc(s, func(r rune) bool { return r < ' ' || r == 0x7f || r == ':' || r == ',' }) {
		d.expected(n, path, "an absolute, clean path inside the container other than / (no .., no : or ,)")
		return ""
	}
	return s
}

// deploymentEnvironment decodes `environment:` as a job's, with the inline environment's
// inference_config, which says where an image that serves itself answers.
func (d *servingDecoder) deploymentEnvironment(n *yaml.Node, path string, dep *serving.Deployment) job.Environment {
	if n.Kind != yaml.MappingNode {
		return d.assets.jobEnvironment(n, path)
	}
	var env job.Environment
	fs := d.assets.environmentFields(&env)
	fs["inference_config"] = func(v *yaml.Node, p string) { dep.Inference = d.inferenceConfig(v, p) }
	d.mapping(n, path, fs)
	d.assets.checkEnvironment(n, path, &env)
	return env
}

// inferenceConfig decodes {liveness_route, readiness_route, scoring_route}, each {path, port}.
// Hangar gives a replica one port, so the routes must share theirs.
func (d *servingDecoder) inferenceConfig(n *yaml.Node, path string) *serving.InferenceConfig {
	ic := &serving.InferenceConfig{}
	var portAt *yaml.Node
	route := func(dst *string) func(*yaml.Node, string) {
		return func(v *yaml.Node, p string) {
			var port int
			got := d.mapping(v, p, fields{
				"path": func(x *yaml.Node, xp string) { *dst = d.routePath(x, xp) },
				"port": func(x *yaml.Node, xp string) { port, _ = d.port(x, xp) },
			})
			for _, k := range []string{"path", "port"} {
				if got[k] == nil && v.Kind == yaml.MappingNode {
					d.required(v, join(p, k))
				}
			}
			switch {
			case port == 0:
			case ic.Port == 0:
				ic.Port, portAt = port, got["port"]
			case port != ic.Port:
				d.errorf(got["port"], join(p, "port"), "%d differs from %d (line %d): Hangar serves every route of a replica on one port", port, ic.Port, portAt.Line)
			}
		}
	}
	got := d.mapping(n, path, fields{
		"liveness_route":  route(&ic.LivenessPath),
		"readiness_route": route(&ic.ReadinessPath),
		"scoring_route":   route(&ic.ScoringPath),
	})
	for _, k := range []string{"liveness_route", "readiness_route", "scoring_route"} {
		if got[k] == nil && n.Kind == yaml.MappingNode {
			d.required(n, join(path, k))
		}
	}
	return ic
}

// routePath decodes an HTTP path: it starts with "/" and holds no spaces or control characters.
func (d *servingDecoder) routePath(n *yaml.Node, path string) string {
	s := d.str(n, path)
	if !strings.HasPrefix(s, "/") || strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		d.expected(n, path, "an HTTP path starting with /")
		return ""
	}
	return s
}

// codeConfiguration decodes {code, scoring_script}: a local code folder (like a job's code)
// and the script, a relative path inside it that must exist.
func (d *servingDecoder) codeConfiguration(n *yaml.Node, path string, dep *serving.Deployment) {
	var script *yaml.Node
	got := d.mapping(n, path, fields{
		"code":           func(v *yaml.Node, p string) { dep.Code = d.jobs.code(v, p) },
		"scoring_script": func(v *yaml.Node, p string) { script = v },
	})
	if n.Kind != yaml.MappingNode {
		d.expected(n, path, "a mapping {code, scoring_script}")
		return
	}
	for _, k := range []string{"code", "scoring_script"} {
		if got[k] == nil {
			d.required(n, join(path, k))
		}
	}
	if script != nil {
		dep.ScoringScript = d.scoringScript(script, join(path, "scoring_script"), dep.Code)
	}
}

// scoringScript checks the script's path: relative, inside the code folder, an existing file.
// It reaches the scoring server as AZUREML_ENTRY_SCRIPT, joined to the code folder.
func (d *servingDecoder) scoringScript(n *yaml.Node, path, code string) string {
	s := d.str(n, path)
	clean := filepath.ToSlash(filepath.Clean(filepath.FromSlash(s)))
	switch {
	case s == "":
		return ""
	case filepath.IsAbs(s) || strings.HasPrefix(s, "/") || clean == ".." || strings.HasPrefix(clean, "../"):
		d.expected(n, path, "a path relative to code_configuration.code, inside it")
		return ""
	case strings.ContainsFunc(s, func(r rune) bool { return r < ' ' || r == 0x7f }):
		d.expected(n, path, "a file name without control characters")
		return ""
	}
	if code == "" {
		return clean // code's own problem is reported
	}
	info, err := os.Stat(filepath.Join(code, filepath.FromSlash(clean)))
	switch {
	case err != nil:
		d.errorf(n, path, "%s does not exist in %s", s, code)
		return ""
	case !info.Mode().IsRegular():
		d.errorf(n, path, "%s is not a regular file", s)
		return ""
	}
	return clean
}
