package spec

import (
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/hangar-ml/hangar/internal/model"
	"github.com/hangar-ml/hangar/internal/serving"
)

// Azure's defaults for target_utilization scaling.
const (
	defaultTargetUtilization = 70
	defaultPollingInterval   = 1
)

// deploymentModel decodes `model:`: a registered model (azureml:<name>:<version>,
// azureml:<name>@latest) or an inline model of the model schema, whose path resolves against
// the file's folder. An inline model's description, tags, properties and stage are kept in
// Extra["model"] for when it is registered.
func (d *servingDecoder) deploymentModel(n *yaml.Node, path string, dep *serving.Deployment) serving.ModelRef {
	if n.Kind == yaml.ScalarNode {
		s := d.str(n, path)
		r, err := model.ParseRef(s, false)
		if err != nil {
			d.errorf(n, path, "%s", strings.TrimPrefix(err.Error(), "model "+s+": "))
			return serving.ModelRef{}
		}
		return serving.ModelRef{Ref: r.String()}
	}
	ref := serving.ModelRef{}
	kept := map[string]any{}
	keepAny := func(key string) func(*yaml.Node, string) {
		return func(v *yaml.Node, p string) { kept[key] = d.anyValue(v, p) }
	}
	got := d.mapping(n, path, fields{
		"name":        func(v *yaml.Node, p string) { ref.Name = d.str(v, p) },
		"version":     func(v *yaml.Node, p string) { ref.Version = d.assets.modelVersion(v, p) },
		"type":        func(v *yaml.Node, p string) { ref.Type = d.enum(v, p, model.Types...) },
		"path":        func(v *yaml.Node, p string) { ref.Path = d.assets.modelPath(v, p) },
		"description": keepAny("description"),
		"tags":        func(v *yaml.Node, p string) { kept["tags"] = d.stringMap(v, p) },
		"properties":  func(v *yaml.Node, p string) { kept["properties"] = d.stringMap(v, p) },
		"stage":       keepAny("stage"),
		"flavors":     nil, // an MLflow model's MLmodel file says it
	})
	if n.Kind != yaml.MappingNode {
		d.expected(n, path, "a model reference like azureml:<name>:<version>, or an inline model {path, type}")
		return ref
	}
	if got["path"] == nil {
		d.required(n, join(path, "path"))
	}
	if got["name"] != nil && ref.Name != "" && model.CheckName(ref.Name) != nil {
		d.expected(got["name"], join(path, "name"), "a name of letters, digits, _, . and - (at most 255)")
	}
	if ref.Type == "" && got["type"] == nil {
		ref.Type = model.CustomModel
		// An MLmodel file at the folder's root makes an MLflow model, as Azure reads it.
		if ref.Path != "" && filepath.IsAbs(ref.Path) {
			if fi, err := os.Stat(filepath.Join(ref.Path, "MLmodel")); err == nil && fi.Mode().IsRegular() {
				ref.Type = model.MLflowModel
			}
		}
	}
	if len(kept) > 0 {
		keep(&dep.Extra, "model", kept)
	}
	return ref
}

// scaleSettings decodes `scale_settings`: type default (instance_count replicas), or
// target_utilization with its bounds.
func (d *servingDecoder) scaleSettings(n *yaml.Node, path string, s *serving.ScaleSettings) {
	target := lookup(n, "type") != nil && matchEnum(lookup(n, "type").Value, []string{serving.ScaleTargetUtilization}) != ""
	if target {
		*s = serving.ScaleSettings{Type: serving.ScaleTargetUtilization, MinInstances: 1, MaxInstances: 1,
			TargetUtilization: defaultTargetUtilization, PollingInterval: defaultPollingInterval}
	}
	only := func(f func(*yaml.Node, string)) func(*yaml.Node, string) {
		return func(v *yaml.Node, p string) {
			if !target {
				d.errorf(v, p, "only with type: target_utilization")
				return
			}
			f(v, p)
		}
	}
	got := d.mapping(n, path, fields{
		"type":                          func(v *yaml.Node, p string) { d.enum(v, p, serving.ScaleDefault, serving.ScaleTargetUtilization) },
		"min_instances":                 only(func(v *yaml.Node, p string) { s.MinInstances, _ = d.boundedInt(v, p, 0, 1000) }),
		"max_instances":                 only(func(v *yaml.Node, p string) { s.MaxInstances, _ = d.boundedInt(v, p, 1, 1000) }),
		"polling_interval":              only(func(v *yaml.Node, p string) { s.PollingInterval, _ = d.boundedInt(v, p, 1, 3600) }),
		"target_utilization_percentage": only(func(v *yaml.Node, p string) { s.TargetUtilization, _ = d.boundedInt(v, p, 1, 100) }),
		"scale_down_delay": func(v *yaml.Node, p string) {
			if secs, ok := d.seconds(v, p); ok {
				s.ScaleDownDelay = int(min(secs, 1<<31-1))
			}
		},
	})
	if target && s.MinInstances > s.MaxInstances {
		at := got["min_instances"]
		if at == nil {
			at = got["max_instances"]
		}
		d.errorf(at, join(path, "min_instances"), "%d is more than max_instances (%d)", s.MinInstances, s.MaxInstances)
	}
}

// requestSettings decodes `request_settings` over Azure's defaults.
func (d *servingDecoder) requestSettings(n *yaml.Node, path string, r *serving.RequestSettings) {
	d.mapping(n, path, fields{
		"request_timeout_ms": func(v *yaml.Node, p string) {
			r.RequestTimeoutMS, _ = d.boundedInt(v, p, 1, 3_600_000)
		},
		"max_concurrent_requests_per_instance": func(v *yaml.Node, p string) {
			r.MaxConcurrentRequestsPerInstance, _ = d.boundedInt(v, p, 1, 100_000)
		},
		"max_queue_wait_ms": func(v *yaml.Node, p string) { r.MaxQueueWaitMS, _ = d.boundedInt(v, p, 0, 3_600_000) },
	})
}

// probe decodes a ProbeSettings mapping over Azure's defaults (seconds and counts).
func (d *servingDecoder) probe(n *yaml.Node, path string, pr *serving.Probe, liveness bool) {
	d.mapping(n, path, fields{
		"initial_delay": func(v *yaml.Node, p string) { pr.InitialDelay, _ = d.boundedInt(v, p, 0, 86_400) },
		"period":        func(v *yaml.Node, p string) { pr.Period, _ = d.boundedInt(v, p, 1, 86_400) },
		"timeout":       func(v *yaml.Node, p string) { pr.Timeout, _ = d.boundedInt(v, p, 1, 86_400) },
		"failure_threshold": func(v *yaml.Node, p string) {
			pr.FailureThreshold, _ = d.boundedInt(v, p, 1, 10_000)
		},
		"success_threshold": func(v *yaml.Node, p string) {
			pr.SuccessThreshold, _ = d.boundedInt(v, p, 1, 10_000)
			if liveness && pr.SuccessThreshold > 1 {
				d.errorf(v, p, "must be 1 for a liveness probe (as in Azure)")
			}
		},
	})
}

// unusedDeploymentFields adds the schema's fields Hangar keeps without acting on them, in
// Extra, with a warning where Azure would behave differently.
func (d *servingDecoder) unusedDeploymentFields(fs fields, dep *serving.Deployment) {
	fs["app_insights_enabled"] = func(n *yaml.Node, p string) {
		v, ok := d.boolean(n, p)
		if ok {
			keep(&dep.Extra, "app_insights_enabled", v)
		}
		if v {
			d.warnf(n, p, "kept, no effect: request metrics are in the studio and /metrics, not Application Insights")
		}
	}
	fs["egress_public_network_access"] = func(n *yaml.Node, p string) {
		v := d.enum(n, p, "enabled", "disabled")
		keep(&dep.Extra, "egress_public_network_access", v)
		if v == "disabled" {
			d.warnf(n, p, "kept, no effect: replicas reach the network their node reaches")
		}
	}
	fs["model_mount_path"] = func(n *yaml.Node, p string) { dep.ModelMountPath = d.mountPath(n, p) }
	fs["data_collector"] = func(n *yaml.Node, p string) {
		keep(&dep.Extra, "data_collector", d.anyMap(n, p))
		d.warnf(n, p, "kept, no effect: no inference data is collected")
	}
	fs["resources"] = func(n *yaml.Node, p string) {
		keep(&dep.Extra, "resources", d.anyMap(n, p))
		d.warnf(n, p, "kept, no effect: a replica takes what its instance_type gives it")
	}
	fs["private_network_connection"] = func(n *yaml.Node, p string) {
		v, _ := d.boolean(n, p)
		keep(&dep.Extra, "private_network_connection", v)
	}
}
