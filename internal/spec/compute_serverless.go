package spec

import (
	"fmt"
	"math"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/pattern"
)

// serverlessSizeName is what a size the serverless pool offers may be called: its cluster is
// named serverless_<size>, a compute name jobs may hold (settings.go's computeName) and the
// start of its nodes' ids.
var serverlessSizeName = pattern.New(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

// serverlessFields adds the keys of `type: serverless` (Hangar, design 0017): the workspace's
// serverless pool. The returned check applies the rules between them.
func (d *computeDecoder) serverlessFields(fs fields) (*compute.ServerlessSpec, func(map[string]*yaml.Node)) {
	s := &compute.ServerlessSpec{
		MaxInstances:            compute.DefaultServerlessMaxInstances,
		IdleTimeBeforeScaleDown: compute.DefaultIdleTimeBeforeScaleDown,
		Provider:                compute.Provider{Type: compute.ProviderLocal},
		MaxProvisionRetries:     compute.DefaultMaxProvisionRetries,
		ProvisionTimeout:        compute.DefaultProvisionTimeout,
	}
	maxOK := true
	fs["sizes"] = func(n *yaml.Node, p string) { s.Sizes = d.serverlessSizes(n, p) }
	fs["default_size"] = func(n *yaml.Node, p string) { s.DefaultSize = d.size(n, p) }
	fs["max_instances"] = func(n *yaml.Node, p string) { s.MaxInstances, maxOK = d.boundedInt(n, p, 1, math.MaxInt32) }
	fs["idle_time_before_scale_down"] = func(n *yaml.Node, p string) { s.IdleTimeBeforeScaleDown, _ = d.seconds(n, p) }
	fs["provider"] = func(n *yaml.Node, p string) { d.provider(n, p, &s.Provider) }
	fs["max_provision_retries"] = func(n *yaml.Node, p string) { s.MaxProvisionRetries, _ = d.boundedInt(n, p, 0, 1000) }
	fs["provision_timeout"] = func(n *yaml.Node, p string) { s.ProvisionTimeout = d.jobs.timeout(n, p) }
	fs["join_timeout"] = func(n *yaml.Node, p string) { s.JoinTimeout = d.jobs.timeout(n, p) }
	return s, func(got map[string]*yaml.Node) {
		if got["sizes"] == nil {
			d.errorf(nil, "sizes", "required: the sizes jobs may ask for, e.g. [Standard_DS3_v2] (hangar sizes list)")
			return
		}
		d.checkServerless(s, got, maxOK)
	}
}

// checkServerless applies the rules between a pool's fields: the default size is offered, no
// size's bound exceeds the pool's quota.
func (d *computeDecoder) checkServerless(s *compute.ServerlessSpec, got map[string]*yaml.Node, maxOK bool) {
	if len(s.Sizes) == 0 {
		return // serverlessSizes reported it
	}
	switch z, ok := s.Size(s.DefaultSize); {
	case s.DefaultSize == "" && got["default_size"] == nil:
		s.DefaultSize = s.Sizes[0].Name
	case s.DefaultSize == "":
		// d.size reported it
	case !ok:
		d.errorf(got["default_size"], "default_size", "expected one of sizes (%s), got %q", strings.Join(s.SizeNames(), ", "), s.DefaultSize)
	default:
		s.DefaultSize = z.Name
	}
	if !maxOK {
		return
	}
	for i, z := range s.Sizes {
		if z.MaxInstances > s.MaxInstances {
			d.errorf(resolve(got["sizes"]).Content[i], fmt.Sprintf("sizes[%d].max_instances", i),
				"expected at most the pool's max_instances (%d), got %d", s.MaxInstances, z.MaxInstances)
		}
	}
}

// serverlessSizes decodes the pool's `sizes:`: a list of size names, or of
// {name, max_instances} mappings.
func (d *computeDecoder) serverlessSizes(n *yaml.Node, path string) []compute.ServerlessSize {
	n = resolve(n)
	var out []compute.ServerlessSize
	seen := map[string]bool{}
	for ip, c := range d.nonEmptyList(n, path, "a non-empty list of size names like [Standard_DS3_v2]") {
		c = resolve(c)
		z := compute.ServerlessSize{}
		var nameNode *yaml.Node
		if c.Kind == yaml.MappingNode {
			got := d.mapping(c, ip, fields{
				"name":          func(v *yaml.Node, p string) { z.Name = d.size(v, p) },
				"max_instances": func(v *yaml.Node, p string) { z.MaxInstances, _ = d.boundedInt(v, p, 1, math.MaxInt32) },
				"isolated":      func(v *yaml.Node, p string) { z.Isolated, _ = d.boolean(v, p) },
			})
			if nameNode = got["name"]; nameNode == nil {
				d.required(c, join(ip, "name"))
				continue
			}
			ip = join(ip, "name")
		} else {
			nameNode, z.Name = c, d.size(c, ip)
		}
		switch key := strings.ToLower(z.Name); {
		case z.Name == "":
			continue // d.size reported it
		case !serverlessSizeName.MatchString(z.Name):
			d.expected(nameNode, ip, "a size name of letters, digits, '_' and '-' (at most 64)")
		case seen[key]:
			d.errorf(nameNode, ip, "size %s is listed twice", z.Name)
		default:
			seen[key] = true
			out = append(out, z)
		}
	}
	return out
}
