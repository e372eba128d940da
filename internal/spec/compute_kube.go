package spec

import (
	"github.com/hangar-ml/hangar/internal/pattern"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/resources"
)

var (
	dnsLabel         = pattern.New(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)
	instanceTypeName = pattern.New(`^[A-Za-z0-9]([A-Za-z0-9_.-]{0,251}[A-Za-z0-9])?$`)
)

// kubernetesFields adds the keys of `type: kubernetes` (SPEC.md §1.3) and Hangar's
// kubeconfig, context and instance_types.
func (d *decoder) kubernetesFields(fs fields, s *compute.Spec) *compute.KubernetesSpec {
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
	return k
}

// instanceTypes decodes instance_types: name → {node_selector, requests, limits}, as in
// Azure's InstanceType resources.
func (d *decoder) instanceTypes(n *yaml.Node, path string) map[string]compute.InstanceType {
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
		})
		d.checkRequestsLimits(got, ip, it)
		out[name] = it
	}
	return out
}

// resourceList decodes {cpu, memory, nvidia.com/gpu} with Kubernetes quantities.
func (d *decoder) resourceList(n *yaml.Node, path string) compute.ResourceList {
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
func (d *decoder) checkRequestsLimits(got map[string]*yaml.Node, path string, it compute.InstanceType) {
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
