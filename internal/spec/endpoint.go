package spec

import (
	"go.yaml.in/yaml/v3"

	"github.com/hangar-ml/hangar/internal/pattern"
	"github.com/hangar-ml/hangar/internal/serving"
)

var (
	// endpointName is Azure's online endpoint name rule: 3 to 32 letters, digits and hyphens,
	// starting with a letter. The name is a path segment of the scoring URI.
	endpointName = pattern.New(`^[a-zA-Z][a-zA-Z0-9-]{2,31}$`)
	// onlineTypes are the `type:` values of online endpoint and deployment files: managed
	// (the default) and kubernetes, both served the same way by Hangar.
	onlineTypes = []string{"managed", "kubernetes"}
	// endpointReadOnly are what `az ml online-endpoint show -o yaml` prints and a file may
	// carry back: ignored with a warning.
	endpointReadOnly = []string{"id", "scoring_uri", "openapi_uri", "provisioning_state", "location", "kind"}
)

// endpointKeys are the keys --set may create in an online endpoint file.
var endpointKeys = []string{
	"name", "type", "description", "tags.*", "properties.*", "auth_mode", "compute", "traffic.*",
	"mirror_traffic.*", "public_network_access", "identity.type",
}

// ParseEndpointFile reads an online endpoint YAML (Azure's managedOnlineEndpoint and
// kubernetesOnlineEndpoint schemas) with the same rules as ParseJobFile: strict decoding,
// every problem with its file, field path and line, and --set overrides.
func ParseEndpointFile(file string, sets []string) (*serving.Endpoint, []string, error) {
	return parseFile(func(file string, data []byte, dir string, sets []string, _ ...FileOption) (*serving.Endpoint, []string, error) {
		return ParseEndpoint(file, data, dir, sets)
	}, file, sets)
}

// ParseEndpoint is ParseEndpointFile for YAML already read.
func ParseEndpoint(file string, data []byte, baseDir string, sets []string) (*serving.Endpoint, []string, error) {
	d, root := begin(file, data, baseDir, sets, endpointKeys)
	if root == nil {
		return nil, d.warnings, d.errs.err()
	}
	e := &serving.Endpoint{AuthMode: serving.AuthKey}
	got := d.mapping(root, "", d.serving.endpointFields(e))
	d.serving.checkEndpoint(got, e)
	return result(d, e)
}

// endpointFields is the online endpoint's field table.
func (d *servingDecoder) endpointFields(e *serving.Endpoint) fields {
	fs := fields{
		"$schema":   nil,
		"type":      func(n *yaml.Node, p string) { d.enum(n, p, onlineTypes...) },
		"name":      func(n *yaml.Node, p string) { e.Name = d.str(n, p) },
		"auth_mode": func(n *yaml.Node, p string) { e.AuthMode = d.authMode(n, p) },
		"compute":   func(n *yaml.Node, p string) { e.Compute = d.jobs.compute(n, p) },
		"traffic":   func(n *yaml.Node, p string) { e.Traffic = d.percents(n, p) },
		"mirror_traffic": func(n *yaml.Node, p string) {
			e.MirrorTraffic = d.percents(n, p)
		},
		"identity": func(n *yaml.Node, p string) {
			keep(&e.Extra, "identity", d.computes.computeIdentity(n, p))
			d.warnf(n, p, "kept, no effect: replicas get no Azure identity")
		},
		"public_network_access": func(n *yaml.Node, p string) {
			v := d.enum(n, p, "enabled", "disabled")
			keep(&e.Extra, "public_network_access", v)
			if v == "disabled" {
				d.warnf(n, p, "kept, no effect: the endpoint is reachable wherever the Hangar server is")
			}
		},
	}
	d.meta(fs, &e.Meta)
	for _, f := range endpointReadOnly {
		fs[f] = func(n *yaml.Node, p string) { d.warnf(n, p, "read-only field ignored") }
	}
	return fs
}

// authMode decodes auth_mode: key or aml_token (Microsoft Entra tokens are Azure's own).
func (d *servingDecoder) authMode(n *yaml.Node, path string) string {
	switch v := d.enum(n, path, serving.AuthKey, serving.AuthAMLToken, "aad_token"); v {
	case "aad_token":
		d.errorf(n, path, "aad_token (Microsoft Entra ID) is not supported by this workspace; use key or aml_token")
		return ""
	default:
		return v
	}
}

// checkEndpoint applies the rules between an endpoint's fields.
func (d *servingDecoder) checkEndpoint(got map[string]*yaml.Node, e *serving.Endpoint) {
	switch n := got["name"]; {
	case n == nil:
		d.required(nil, "name")
	case e.Name != "" && !endpointName.MatchString(e.Name):
		d.expected(n, "name", "an endpoint name of 3 to 32 letters, digits and -, starting with a letter")
	}
	total := 0
	for _, name := range keys(e.Traffic) {
		d.checkDeploymentRef(got["traffic"], "traffic", name)
		total += e.Traffic[name]
	}
	if total != 0 && total != 100 {
		d.errorf(got["traffic"], "traffic", "the percentages add up to %d; they must add up to 100 (or all be 0)", total)
	}
	mirrored := 0
	for _, name := range keys(e.MirrorTraffic) {
		d.checkDeploymentRef(got["mirror_traffic"], "mirror_traffic", name)
		mirrored += e.MirrorTraffic[name]
		if e.MirrorTraffic[name] > 0 && e.Traffic[name] > 0 {
			d.errorf(keyNode(got["mirror_traffic"], name), join("mirror_traffic", name),
				"deployment %s also gets live traffic; a deployment is either live or a mirror", name)
		}
	}
	if mirrored > 100 {
		d.errorf(got["mirror_traffic"], "mirror_traffic", "the percentages add up to %d; at most 100", mirrored)
	}
}

// checkDeploymentRef checks a deployment name used as a traffic key.
func (d *servingDecoder) checkDeploymentRef(m *yaml.Node, path, name string) {
	if !deploymentName.MatchString(name) {
		d.errorf(keyNode(m, name), join(path, name), "%s is not a deployment name (letters, digits, _ and -, starting with a letter or digit, at most 32)", quote(name))
	}
}

// percents decodes a map of deployment name → integer percentage (0 to 100).
func (d *servingDecoder) percents(n *yaml.Node, path string) map[string]int {
	pairs := d.entries(n, path)
	if len(pairs) == 0 {
		return nil
	}
	out := make(map[string]int, len(pairs))
	for _, p := range pairs {
		if v, ok := d.boundedInt(p.value, join(path, p.key.Value), 0, 100); ok {
			out[p.key.Value] = v
		}
	}
	return out
}

// keep stores a value in an Extra map, creating it.
func keep(extra *map[string]any, key string, v any) {
	if *extra == nil {
		*extra = map[string]any{}
	}
	(*extra)[key] = v
}
