package spec

import (
	"net/url"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/pattern"
	"github.com/hangar-ml/hangar/internal/resources"
)

var (
	dnsLabel         = pattern.New(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)
	instanceTypeName = pattern.New(`^[A-Za-z0-9]([A-Za-z0-9_.-]{0,251}[A-Za-z0-9])?$`)
)

// kubernetesFields adds the keys of `type: kubernetes` (SPEC.md §1.3) and Hangar's
// kubeconfig, context and instance_types.
func (d *computeDecoder) kubernetesFields(fs fields, s *compute.Spec) *compute.KubernetesSpec {
	k := &compute.KubernetesSpec{Namespace: compute.DefaultNamespace}
	fs["namespace"] = func(n *yaml.Node, p string) {
		if k.Namespace = strings.TrimSpace(d.str(n, p)); !dnsLabel.MatchString(k.Namespace) {
			d.expected(n, p, "a namespace name (lower-case letters, digits and -, at most 63)")
		}
	}
	fs["kubeconfig"] = func(n *yaml.Node, p string) { k.Kubeconfig, _ = d.localFile(n, p) }
	fs["context"] = func(n *yaml.Node, p string) { k.Context = strings.TrimSpace(d.str(n, p)) }
	fs["instance_types"] = func(n *yaml.Node, p string) { k.InstanceTypes = d.instanceTypes(n, p) }
	fs["identity"] = func(n *yaml.Node, p string) { s.Identity = d.computeIdentity(n, p) }
	fs["properties"] = func(n *yaml.Node, p string) { k.Properties = d.anyMap(n, p) }
	fs["default_instance_type"] = func(n *yaml.Node, p string) { k.DefaultInstanceType = strings.TrimSpace(d.str(n, p)) }
	fs["default_image"] = func(n *yaml.Node, p string) { k.DefaultImage = strings.TrimSpace(d.str(n, p)) }
	fs["supervisor"] = func(n *yaml.Node, p string) { k.Supervisor = d.kubeSupervisor(n, p) }
	fs["server_url"] = func(n *yaml.Node, p string) {
		k.ServerURL = strings.TrimSpace(d.str(n, p))
		if u, err := url.Parse(k.ServerURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			d.expected(n, p, "an http:// or https:// URL the pods reach the server at")
		}
	}
	fs["pod_labels"] = func(n *yaml.Node, p string) {
		k.PodLabels = d.stringMap(n, p)
		for key, v := range k.PodLabels {
			if !labelKey.MatchString(key) || (v != "" && !labelValue.MatchString(v)) {
				d.errorf(lookup(n, key), join(p, key), "expected a Kubernetes label (a key like example.com/name, a value of letters, digits, -, _ and ., at most 63)")
			}
		}
	}
	fs["pod_annotations"] = func(n *yaml.Node, p string) { k.PodAnnotations = d.stringMap(n, p) }
	fs["host_network"] = func(n *yaml.Node, p string) { k.HostNetwork, _ = d.boolean(n, p) }
	fs["queue_name"] = func(n *yaml.Node, p string) {
		if k.QueueName = strings.TrimSpace(d.str(n, p)); !labelValue.MatchString(k.QueueName) {
			d.expected(n, p, "a Kueue LocalQueue name (letters, digits, -, _ and ., at most 63)")
		}
	}
	return k
}

var labelKey = pattern.New(`^([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`)

var labelValue = pattern.New(`^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`)

// checkKubernetes applies the rules across a kubernetes file's fields: the default instance
// type is one of instance_types. (A file without supervisor: parses, as Azure's attach files
// do; attaching it says what to add.)
func (d *computeDecoder) checkKubernetes(k *compute.KubernetesSpec) func(got map[string]*yaml.Node) {
	return func(got map[string]*yaml.Node) {
		if n := got["default_instance_type"]; n != nil && k.DefaultInstanceType != "" {
			if _, ok := k.InstanceTypes[k.DefaultInstanceType]; !ok {
				d.errorf(n, "default_instance_type", "%q is not one of instance_types", k.DefaultInstanceType)
			}
		}
	}
}

// kubeSupervisor decodes supervisor: {image | host_path}.
func (d *computeDecoder) kubeSupervisor(n *yaml.Node, path string) compute.KubeSupervisor {
	var sup compute.KubeSupervisor
	got := d.mapping(n, path, fields{
		"image": func(v *yaml.Node, p string) { sup.Image = strings.TrimSpace(d.str(v, p)) },
		"host_path": func(v *yaml.Node, p string) {
			if sup.HostPath = strings.TrimSpace(d.str(v, p)); !filepath.IsAbs(sup.HostPath) {
				d.expected(v, p, "an absolute directory path on the nodes")
			}
		},
	})
	if got["image"] != nil && got["host_path"] != nil {
		d.errorf(got["host_path"], join(path, "host_path"), "give image or host_path, not both")
	}
	return sup
}

// instanceTypes decodes instance_types: name → {node_selector, requests, limits}, as in
// Azure's InstanceType resources.
func (d *computeDecoder) instanceTypes(n *yaml.Node, path string) map[string]compute.InstanceType {
	out := map[string]compute.InstanceType{}
	for _, p := range d.entries(n, path) {
		name, v := p.key.Value, resolve(p.value)
		ip := join(path, name)
		if !instanceTypeName.MatchString(name) {
			d.errorf(p.key, ip, "expected an instance type name of letters, digits, _, . and -")
			continue
		}
		if v.Kind != yaml.MappingNode {
			d.expected(v, ip, "a mapping of node_selector, requests and limits")
			continue
		}
		var it compute.InstanceType
		got := d.mapping(v, ip, fields{
			"node_selector": func(v *yaml.Node, p string) { it.NodeSelector = d.stringMap(v, p) },
			"requests":      func(v *yaml.Node, p string) { it.Requests = d.resourceList(v, p) },
			"limits":        func(v *yaml.Node, p string) { it.Limits = d.resourceList(v, p) },
			"tolerations":   func(v *yaml.Node, p string) { it.Tolerations = d.tolerations(v, p) },
		})
		d.checkRequestsLimits(got, ip, it)
		out[name] = it
	}
	return out
}

// resourceList decodes {cpu, memory, nvidia.com/gpu} with Kubernetes quantities.
func (d *computeDecoder) resourceList(n *yaml.Node, path string) compute.ResourceList {
	var r compute.ResourceList
	d.mapping(n, path, fields{
		"cpu": func(v *yaml.Node, p string) {
			r.CPU = strings.TrimSpace(d.str(v, p))
			if _, err := resources.ParseCPU(r.CPU); err != nil {
				d.expected(v, p, "a CPU quantity like 2, 0.5 or 500m")
				r.CPU = ""
			}
		},
		"memory": func(v *yaml.Node, p string) {
			r.Memory = strings.TrimSpace(d.str(v, p))
			if _, err := resources.ParseMemory(r.Memory); err != nil {
				d.expected(v, p, "a memory quantity like 2Gi or 512Mi")
				r.Memory = ""
			}
		},
		"nvidia.com/gpu": func(v *yaml.Node, p string) { r.GPU, _ = d.boundedInt(v, p, 0, 1024) },
	})
	return r
}

// checkRequestsLimits applies Kubernetes' rules: a request is at most its limit, and
// GPU requests equal GPU limits.
func (d *computeDecoder) checkRequestsLimits(got map[string]*yaml.Node, path string, it compute.InstanceType) {
	req, lim := got["requests"], got["limits"]
	if req == nil || lim == nil {
		return
	}
	rq, lm := it.Requests, it.Limits
	if rq.CPU != "" && lm.CPU != "" {
		a, _ := resources.ParseCPU(rq.CPU)
		b, _ := resources.ParseCPU(lm.CPU)
		if a > b {
			d.errorf(lookup(req, "cpu"), join(path, "requests.cpu"), "%s is more than limits.cpu (%s)", rq.CPU, lm.CPU)
		}
	}
	if rq.Memory != "" && lm.Memory != "" {
		a, _ := resources.ParseMemory(rq.Memory)
		b, _ := resources.ParseMemory(lm.Memory)
		if a > b {
			d.errorf(lookup(req, "memory"), join(path, "requests.memory"), "%s is more than limits.memory (%s)", rq.Memory, lm.Memory)
		}
	}
	if rq.GPU != 0 && lm.GPU != 0 && rq.GPU != lm.GPU {
		d.errorf(lookup(req, "nvidia.com/gpu"), join(path, "requests.nvidia.com/gpu"), "%d differs from limits.nvidia.com/gpu (%d); GPU requests must equal limits", rq.GPU, lm.GPU)
	}
}

// tolerations decodes a list of Kubernetes tolerations.
func (d *computeDecoder) tolerations(n *yaml.Node, path string) []compute.Toleration {
	n = resolve(n)
	var out []compute.Toleration
	for ip, item := range d.list(n, path, "a list of tolerations ({key, operator, value, effect})") {
		var t compute.Toleration
		got := d.mapping(item, ip, fields{
			"key":      func(v *yaml.Node, p string) { t.Key = strings.TrimSpace(d.str(v, p)) },
			"operator": func(v *yaml.Node, p string) { t.Operator = d.enum(v, p, "Equal", "Exists") },
			"value":    func(v *yaml.Node, p string) { t.Value = d.str(v, p) },
			"effect":   func(v *yaml.Node, p string) { t.Effect = d.enum(v, p, "NoSchedule", "PreferNoSchedule", "NoExecute") },
		})
		if t.Operator == "Exists" && got["value"] != nil && t.Value != "" {
			d.errorf(got["value"], join(ip, "value"), "must be empty when operator is Exists")
		}
		out = append(out, t)
	}
	return out
}
