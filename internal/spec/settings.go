package spec

import (
	"github.com/hangar-ml/hangar/internal/binding"
	"github.com/hangar-ml/hangar/internal/pattern"
	"math"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/hangar-ml/hangar/internal/job"
)

var (
	computeName = pattern.New(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,254}$`)
	shmSize     = pattern.New(`^(?i)\d+[bkmg]$`)
	isoDuration = pattern.New(`^(?i)P(?:(\d{1,9})W)?(?:(\d{1,9})D)?(?:T(?:(\d{1,9})H)?(?:(\d{1,9})M)?(?:(\d{1,9}(?:\.\d{1,9})?)S)?)?$`)
)

// compute decodes `compute:` to a bare target name: azureml:NAME and NAME give NAME,
// local and serverless (with or without azureml:) are kept; ARM ids are refused.
func (d *jobDecoder) compute(n *yaml.Node, path string) string {
	v := strings.TrimSpace(d.str(n, path))
	lower := strings.ToLower(v)
	if strings.HasPrefix(lower, "azureml:/") || strings.HasPrefix(lower, "/subscriptions/") {
		d.errorf(n, path, "ARM resource ids are not supported by this workspace; use azureml:<name>")
		return ""
	}
	name := v
	if strings.HasPrefix(lower, "azureml:") {
		name = v[len("azureml:"):]
	}
	switch strings.ToLower(name) {
	case "local", "serverless":
		return strings.ToLower(name)
	}
	if !computeName.MatchString(name) {
		d.expected(n, path, "a compute name like azureml:cpu-cluster, local or serverless")
		return ""
	}
	return name
}

// code decodes `code:`, a local directory (or the legacy {local_path: dir}).
func (d *jobDecoder) code(n *yaml.Node, path string) string {
	return d.codeOf(n, path, false)
}

// jobCode decodes a job's or a component's `code:`: a local directory, or a single file (Azure
// takes code: ./train.py; the snapshot holds that file at its root).
func (d *jobDecoder) jobCode(n *yaml.Node, path string) string {
	return d.codeOf(n, path, true)
}

func (d *jobDecoder) codeOf(n *yaml.Node, path string, fileOK bool) string {
	if n.Kind == yaml.MappingNode {
		var local *yaml.Node
		d.mapping(n, path, fields{"local_path": func(v *yaml.Node, _ string) { local = v }})
		if local == nil {
			d.required(n, join(path, "local_path"))
			return ""
		}
		d.warnf(n, path, "{local_path: ...} is a legacy form; write code: %s", local.Value)
		return d.codeDir(local, join(path, "local_path"), fileOK)
	}
	return d.codeDir(n, path, fileOK)
}

func (d *jobDecoder) codeDir(n *yaml.Node, path string, fileOK bool) string {
	s := d.str(n, path)
	lower := strings.ToLower(s)
	switch {
	case s == "":
		d.expected(n, path, "a local directory")
		return ""
	case strings.HasPrefix(lower, "git+") || strings.HasPrefix(lower, "git://"):
		d.errorf(n, path, "git code (%s) is not supported yet; use a local directory", s)
		return ""
	case isURI(s):
		d.errorf(n, path, "remote code (%s) is not supported yet; use a local directory", s)
		return ""
	}
	if !fileOK {
		p, _ := d.dir(n, path, s, "code")
		return p
	}
	p, info, ok := d.stat(n, path, s)
	switch {
	case !ok:
		return ""
	case !info.IsDir() && !info.Mode().IsRegular():
		d.errorf(n, path, "%s is neither a directory nor a regular file", s)
		return ""
	}
	return p
}

// envVars decodes `environment_variables:`; scalar values are stringified.
func (d *jobDecoder) envVars(n *yaml.Node, path string) map[string]string {
	m := d.stringMap(n, path)
	for _, k := range keys(m) {
		if err := binding.CheckEnvironmentVariable(k, m[k]); err != nil {
			d.errorf(keyNode(n, k), join(path, k), "%v", err)
		}
	}
	return m
}

// resources decodes `resources:`.
func (d *jobDecoder) resources(n *yaml.Node, path string) job.Resources {
	var r job.Resources
	d.mapping(n, path, fields{
		"instance_count": func(v *yaml.Node, p string) { r.InstanceCount = d.smallInt(v, p, 1) },
		"instance_type":  func(v *yaml.Node, p string) { r.InstanceType = d.str(v, p) },
		"shm_size": func(v *yaml.Node, p string) {
			if r.ShmSize = strings.ToLower(d.str(v, p)); !shmSize.MatchString(r.ShmSize) {
				d.expected(v, p, "a size like 2g (digits then b, k, m or g)")
			}
		},
		"docker_args":        func(v *yaml.Node, p string) { r.DockerArgs = d.str(v, p) },
		"locations":          func(v *yaml.Node, p string) { r.Locations = d.stringList(v, p) },
		"max_instance_count": func(v *yaml.Node, p string) { r.MaxInstanceCount = d.smallInt(v, p, 1) },
		"properties":         func(v *yaml.Node, p string) { r.Properties = d.anyMap(v, p) },
	})
	return r
}

// smallInt decodes an int field with a lower bound, capped to 32 bits.
func (d *decoder) smallInt(n *yaml.Node, path string, lo int64) int {
	v, ok := d.intAtLeast(n, path, lo)
	if ok && v > math.MaxInt32 {
		d.errorf(n, path, "expected integer <= %d, got %d", math.MaxInt32, v)
		return 0
	}
	return int(v)
}

// limits decodes `limits:`.
func (d *jobDecoder) limits(n *yaml.Node, path string) job.Limits {
	var l job.Limits
	d.mapping(n, path, fields{
		"timeout": func(v *yaml.Node, p string) { l.TimeoutSeconds = d.timeout(v, p) },
	})
	return l
}

// timeout decodes a positive number of seconds: a YAML integer, or an ISO-8601 duration
// such as PT1H30M (fractions of a second round up).
func (d *jobDecoder) timeout(n *yaml.Node, path string) int64 {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!int" {
		var v int64
		if n.Decode(&v) == nil && v > 0 {
			return v
		}
		d.expected(n, path, "integer seconds > 0")
		return 0
	}
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str" {
		if secs := isoSeconds(n.Value); secs > 0 {
			return secs
		}
	}
	d.expected(n, path, "integer seconds")
	return 0
}

// isoSeconds parses an ISO-8601 duration (weeks, days, hours, minutes, seconds); 0
// means not one.
func isoSeconds(s string) int64 {
	m := isoDuration.FindStringSubmatch(s)
	if m == nil {
		return 0
	}
	var total float64
	for i, unit := range []float64{7 * 86400, 86400, 3600, 60, 1} {
		if m[i+1] != "" {
			v, _ := strconv.ParseFloat(m[i+1], 64)
			total += v * unit
		}
	}
	return int64(math.Ceil(total))
}

// distribution decodes `distribution:` with the keys of its type (SPEC.md §2.1).
func (d *jobDecoder) distribution(n *yaml.Node, path string) *job.Distribution {
	if n.Kind != yaml.MappingNode {
		d.expected(n, path, "a mapping")
		return nil
	}
	t := lookup(n, "type")
	if isNull(t) {
		d.required(n, join(path, "type"))
		return nil
	}
	dist := &job.Distribution{Type: d.enum(t, join(path, "type"), "pytorch", "mpi", "tensorflow", "ray")}
	fs := fields{"type": nil}
	switch dist.Type {
	case "":
		return nil
	case "pytorch", "mpi":
		// Omitted stays 0: one process per GPU of the node, or one (decided where it runs).
		fs["process_count_per_instance"] = func(v *yaml.Node, p string) { dist.ProcessCountPerInstance = d.smallInt(v, p, 1) }
	case "tensorflow":
		fs["worker_count"] = func(v *yaml.Node, p string) { dist.WorkerCount = d.smallInt(v, p, 0) }
		fs["parameter_server_count"] = func(v *yaml.Node, p string) { dist.ParameterServerCount = d.smallInt(v, p, 0) }
	case "ray":
		dist.Ray = map[string]any{}
		for _, key := range []string{"address", "head_node_additional_args", "worker_node_additional_args"} {
			fs[key] = func(v *yaml.Node, p string) { dist.Ray[key] = d.str(v, p) }
		}
		for _, key := range []string{"port", "dashboard_port"} {
			fs[key] = func(v *yaml.Node, p string) {
				if port := d.smallInt(v, p, 1); port > 65535 {
					d.errorf(v, p, "expected a port number <= 65535, got %d", port)
				} else {
					dist.Ray[key] = port
				}
			}
		}
		fs["include_dashboard"] = func(v *yaml.Node, p string) { dist.Ray["include_dashboard"], _ = d.boolean(v, p) }
	}
	d.mapping(n, path, fs)
	return dist
}

// queueSettings decodes `queue_settings:`.
func (d *jobDecoder) queueSettings(n *yaml.Node, path string) job.QueueSettings {
	var q job.QueueSettings
	d.mapping(n, path, fields{
		"job_tier": func(v *yaml.Node, p string) { q.JobTier = d.enum(v, p, "spot", "basic", "standard", "premium") },
		"priority": func(v *yaml.Node, p string) { q.Priority = d.enum(v, p, "low", "medium", "high") },
	})
	return q
}

// identity decodes `identity:`, kept verbatim with its type normalised.
func (d *jobDecoder) identity(n *yaml.Node, path string) map[string]any {
	out := map[string]any{}
	var managedOnly []pair // value node, and its path in a scalar node's Value
	str := func(key string) func(*yaml.Node, string) {
		return func(v *yaml.Node, p string) {
			out[key] = d.str(v, p)
			managedOnly = append(managedOnly, pair{key: &yaml.Node{Value: p}, value: v})
		}
	}
	got := d.mapping(n, path, fields{
		"type": func(v *yaml.Node, p string) {
			t := d.enum(v, p, "user_identity", "managed", "managed_identity", "aml_token")
			if t == "managed_identity" {
				t = "managed"
			}
			out["type"] = t
		},
		"client_id": str("client_id"), "object_id": str("object_id"), "resource_id": str("resource_id"),
	})
	if got["type"] == nil && n.Kind == yaml.MappingNode {
		d.required(n, join(path, "type"))
	}
	if out["type"] != "managed" && out["type"] != nil {
		for _, f := range managedOnly {
			d.errorf(f.value, f.key.Value, "only allowed for type: managed")
		}
	}
	return out
}

// services decodes `services:` (interactive endpoints), kept verbatim; the read-only
// endpoint, status and error_message are dropped.
func (d *jobDecoder) services(n *yaml.Node, path string) map[string]any {
	out := map[string]any{}
	for _, p := range d.entries(n, path) {
		sp := join(path, p.key.Value)
		v := resolve(p.value)
		if v.Kind != yaml.MappingNode {
			d.expected(v, sp, "a service mapping")
			continue
		}
		svc := map[string]any{}
		keep := func(key string) func(*yaml.Node, string) {
			return func(v *yaml.Node, p string) { svc[key] = d.anyValue(v, p) }
		}
		d.mapping(v, sp, fields{
			"type": keep("type"), "port": keep("port"), "nodes": keep("nodes"), "properties": keep("properties"),
			"log_dir": keep("log_dir"), "ssh_public_keys": keep("ssh_public_keys"),
			"endpoint": nil, "status": nil, "error_message": nil,
		})
		out[p.key.Value] = svc
	}
	return out
}
