package spec

import (
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/hangar-ml/hangar/internal/model"
	"github.com/hangar-ml/hangar/internal/serving"
)

// batchEndpointKeys and batchDeploymentKeys are the keys --set may create in batch files.
var (
	batchEndpointKeys = []string{"name", "description", "tags.*", "properties.*", "auth_mode",
		"defaults.deployment_name"}
	batchSettingKeys = []string{"max_concurrency_per_instance", "mini_batch_size", "output_action",
		"output_file_name", "error_threshold", "retry_settings.max_retries", "retry_settings.timeout",
		"logging_level", "environment_variables.*"}
	batchDeploymentKeys = append(append([]string{
		"name", "endpoint_name", "description", "tags.*", "properties.*", "type", "model", "model.path",
		"model.type", "model.name", "model.version", "code_configuration.code",
		"code_configuration.scoring_script", "compute", "resources.instance_count",
	}, prefixed("settings.", batchSettingKeys)...), prefixed("environment.", envKeys)...)
	// batchReadOnly are what `az ml batch-* show -o yaml` prints.
	batchReadOnly = []string{"id", "scoring_uri", "swagger_uri", "provisioning_state", "location", "kind"}
)

// ParseBatchEndpointFile reads a batch endpoint YAML (Azure's batchEndpoint schema) with the
// same rules as ParseJobFile.
func ParseBatchEndpointFile(file string, sets []string) (*serving.BatchEndpoint, []string, error) {
	return parseFile(func(file string, data []byte, dir string, sets []string, _ ...FileOption) (*serving.BatchEndpoint, []string, error) {
		return ParseBatchEndpoint(file, data, dir, sets)
	}, file, sets)
}

// ParseBatchEndpoint is ParseBatchEndpointFile for YAML already read.
func ParseBatchEndpoint(file string, data []byte, baseDir string, sets []string) (*serving.BatchEndpoint, []string, error) {
	d, root := begin(file, data, baseDir, sets, batchEndpointKeys)
	if root == nil {
		return nil, d.warnings, d.errs.err()
	}
	e := &serving.BatchEndpoint{AuthMode: serving.AuthAADToken}
	fs := fields{
		"$schema": nil,
		"name":    func(n *yaml.Node, p string) { e.Name = d.str(n, p) },
		// aad_token is Azure's only mode; the workspace token opens the endpoint instead.
		"auth_mode": func(n *yaml.Node, p string) { e.AuthMode = d.enum(n, p, serving.AuthAADToken) },
		"defaults": func(n *yaml.Node, p string) {
			d.mapping(n, p, fields{"deployment_name": func(v *yaml.Node, vp string) {
				if e.DefaultDeployment = d.str(v, vp); e.DefaultDeployment != "" && !deploymentName.MatchString(e.DefaultDeployment) {
					d.expected(v, vp, "a deployment name of 1 to 32 letters, digits, _ and -, starting with a letter or digit")
				}
			}})
		},
	}
	d.meta(fs, &e.Meta)
	for _, f := range batchReadOnly {
		fs[f] = func(n *yaml.Node, p string) { d.warnf(n, p, "read-only field ignored") }
	}
	got := d.mapping(root, "", fs)
	switch n := got["name"]; {
	case n == nil:
		d.required(nil, "name")
	case e.Name != "" && !endpointName.MatchString(e.Name):
		d.expected(n, "name", "an endpoint name of 3 to 32 letters, digits and -, starting with a letter")
	}
	return result(d, e)
}

// ParseBatchDeploymentFile reads a batch deployment YAML (Azure's batchDeployment schema):
// `type: model`, or the legacy form (no type) with its settings at the root. `type: pipeline`
// is refused. Relative paths resolve against the file's folder and are returned absolute.
func ParseBatchDeploymentFile(file string, sets []string, opts ...FileOption) (*serving.BatchDeployment, []string, error) {
	return parseFile(ParseBatchDeployment, file, sets, opts...)
}

// ParseBatchDeployment is ParseBatchDeploymentFile for YAML already read.
func ParseBatchDeployment(file string, data []byte, baseDir string, sets []string, opts ...FileOption) (*serving.BatchDeployment, []string, error) {
	d, root := begin(file, data, baseDir, sets, batchDeploymentKeys, opts...)
	if root == nil {
		return nil, d.warnings, d.errs.err()
	}
	dep := &serving.BatchDeployment{InstanceCount: 1, Settings: serving.DefaultBatchSettings()}
	typ := lookup(root, "type")
	if typ != nil && typ.Kind == yaml.ScalarNode && strings.TrimSpace(typ.Value) == "pipeline" {
		d.errorf(typ, "type", "pipeline batch deployments are not supported yet; deploy a model (type: model)")
		return nil, d.warnings, d.errs.err()
	}
	fs := d.serving.batchDeploymentFields(dep)
	if typ == nil {
		// The legacy form: the settings sit at the root.
		for k, f := range d.serving.batchSettingFields(&dep.Settings) {
			fs[k] = f
		}
		delete(fs, "settings")
	}
	got := d.mapping(root, "", fs)
	d.serving.checkBatchDeployment(got, dep)
	return result(d, dep)
}

func (d *servingDecoder) batchDeploymentFields(dep *serving.BatchDeployment) fields {
	str := func(dst *string) func(*yaml.Node, string) {
		return func(n *yaml.Node, p string) { *dst = d.str(n, p) }
	}
	fs := fields{
		"$schema":       nil,
		"type":          func(n *yaml.Node, p string) { d.enum(n, p, "model", "pipeline") },
		"name":          str(&dep.Name),
		"endpoint_name": str(&dep.Endpoint),
		"model": func(n *yaml.Node, p string) {
			if n.Kind == yaml.MappingNode && keyIndex(n, "local_path") >= 0 {
				k := keyNode(n, "local_path")
				d.warnf(k, join(p, "local_path"), "a legacy form; write model: {path: ...}")
				k.Value = "path"
			}
			var online serving.Deployment
			dep.Model = d.deploymentModel(n, p, &online)
			dep.Extra = online.Extra
		},
		"code_configuration": func(n *yaml.Node, p string) {
			var online serving.Deployment
			d.codeConfiguration(n, p, &online)
			dep.Code, dep.ScoringScript = online.Code, online.ScoringScript
		},
		"environment": func(n *yaml.Node, p string) { dep.Environment = d.assets.jobEnvironment(n, p) },
		"compute":     func(n *yaml.Node, p string) { dep.Compute = d.jobs.compute(n, p) },
		"resources": func(n *yaml.Node, p string) {
			d.mapping(n, p, fields{"instance_count": func(v *yaml.Node, vp string) { dep.InstanceCount = d.smallInt(v, vp, 1) }})
		},
		"settings": func(n *yaml.Node, p string) { d.mapping(n, p, d.batchSettingFields(&dep.Settings)) },
	}
	d.meta(fs, &dep.Meta)
	for _, f := range batchReadOnly {
		fs[f] = func(n *yaml.Node, p string) { d.warnf(n, p, "read-only field ignored") }
	}
	return fs
}

// batchSettingFields is the table of `settings:` (or the legacy form's root).
func (d *servingDecoder) batchSettingFields(s *serving.BatchSettings) fields {
	return fields{
		"max_concurrency_per_instance": func(n *yaml.Node, p string) { s.MaxConcurrencyPerInstance = d.smallInt(n, p, 1) },
		"mini_batch_size": func(n *yaml.Node, p string) {
			if count, bytes := d.parallel.miniBatchSize(n, p); count > 0 || bytes > 0 {
				s.MiniBatchSize, s.MiniBatchBytes = count, bytes
			}
		},
		"output_action": func(n *yaml.Node, p string) {
			s.OutputAction = d.enum(n, p, serving.OutputAppendRow, serving.OutputSummaryOnly)
		},
		"output_file_name": func(n *yaml.Node, p string) {
			v := d.str(n, p)
			if v == "" || v != filepath.Base(v) || v == "." || v == ".." || strings.ContainsAny(v, "/\\\x00") {
				d.expected(n, p, "a file name, without folders")
				return
			}
			s.OutputFileName = v
		},
		"error_threshold": func(n *yaml.Node, p string) { s.ErrorThreshold = d.smallInt(n, p, -1) },
		"retry_settings": func(n *yaml.Node, p string) {
			d.mapping(n, p, fields{
				"max_retries": func(v *yaml.Node, vp string) { s.MaxRetries = d.smallInt(v, vp, 0) },
				"timeout":     func(v *yaml.Node, vp string) { s.Timeout = int(d.jobs.timeout(v, vp)) },
			})
		},
		"logging_level":         func(n *yaml.Node, p string) { s.LoggingLevel = d.enum(n, p, "debug", "info", "warning") },
		"environment_variables": func(n *yaml.Node, p string) { s.EnvironmentVariables = d.jobs.envVars(n, p) },
	}
}

// checkBatchDeployment applies the rules between a batch deployment's fields.
func (d *servingDecoder) checkBatchDeployment(got map[string]*yaml.Node, dep *serving.BatchDeployment) {
	d.checkDeploymentNames(got, dep.Name, dep.Endpoint)
	if got["model"] == nil {
		d.required(nil, "model")
	}
	if got["compute"] == nil {
		d.required(nil, "compute")
	}
	if got["code_configuration"] != nil {
		return
	}
	// No scoring script: an MLflow model is scored by Hangar's built-in MLflow batch scorer.
	switch {
	case dep.Model.Ref != "":
		// A registered model's type is known to the workspace only; the server decides.
	case dep.Model.Type != model.MLflowModel:
		d.errorf(nil, "code_configuration", "required: a scoring script with init() and run(mini_batch), unless the model is an mlflow_model (type: mlflow_model, or an MLmodel file at its folder's root)")
		return
	}
	if dep.Settings.OutputAction == serving.OutputSummaryOnly {
		d.errorf(got["settings"], "settings.output_action", "summary_only: a deployment without code_configuration has no script to write its outputs; use append_row (the predictions go to output_file_name)")
	}
	if dep.Model.Type == model.MLflowModel && got["environment"] == nil {
		d.warnf(got["model"], "environment", "%s", mlflowEnvironmentWarning)
	}
}
