package spec

import (
	"math"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/hangar-ml/hangar/internal/binding"
	"github.com/hangar-ml/hangar/internal/compute"
)

// clusterFields adds the keys of `type: amlcompute`/`cluster` (SPEC.md §1.1) and
// Hangar's provider keys; the returned check applies the rules between them.
func (d *computeDecoder) clusterFields(fs fields, s *compute.Spec) (*compute.ClusterSpec, func(map[string]*yaml.Node)) {
	c := &compute.ClusterSpec{
		Size:                    compute.DefaultSize,
		Tier:                    compute.TierDedicated,
		MaxInstances:            1,
		IdleTimeBeforeScaleDown: compute.DefaultIdleTimeBeforeScaleDown,
		EnableNodePublicIP:      true,
		Provider:                compute.Provider{Type: compute.ProviderLocal},
		MaxProvisionRetries:     compute.DefaultMaxProvisionRetries,
		ProvisionTimeout:        compute.DefaultProvisionTimeout,
	}
	minOK, maxOK := true, true
	fs["size"] = func(n *yaml.Node, p string) { c.Size = d.size(n, p) }
	fs["tier"] = func(n *yaml.Node, p string) { c.Tier = d.enum(n, p, compute.TierDedicated, compute.TierLowPriority) }
	fs["min_instances"] = func(n *yaml.Node, p string) { c.MinInstances, minOK = d.boundedInt(n, p, 0, math.MaxInt32) }
	fs["max_instances"] = func(n *yaml.Node, p string) { c.MaxInstances, maxOK = d.boundedInt(n, p, 1, math.MaxInt32) }
	fs["idle_time_before_scale_down"] = func(n *yaml.Node, p string) { c.IdleTimeBeforeScaleDown, _ = d.seconds(n, p) }
	fs["ssh_public_access_enabled"] = func(n *yaml.Node, p string) { c.SSHPublicAccessEnabled, _ = d.boolean(n, p) }
	fs["ssh_settings"] = func(n *yaml.Node, p string) { c.SSHSettings = d.sshSettings(n, p, false) }
	fs["network_settings"] = func(n *yaml.Node, p string) { c.NetworkSettings = d.networkSettings(n, p) }
	fs["enable_node_public_ip"] = func(n *yaml.Node, p string) { c.EnableNodePublicIP, _ = d.boolean(n, p) }
	fs["identity"] = func(n *yaml.Node, p string) { s.Identity = d.computeIdentity(n, p) }
	fs["provider"] = func(n *yaml.Node, p string) { d.provider(n, p, &c.Provider) }
	fs["max_provision_retries"] = func(n *yaml.Node, p string) { c.MaxProvisionRetries, _ = d.boundedInt(n, p, 0, 1000) }
	fs["provision_timeout"] = func(n *yaml.Node, p string) { c.ProvisionTimeout = d.jobs.timeout(n, p) }
	fs["join_timeout"] = func(n *yaml.Node, p string) { c.JoinTimeout = d.jobs.timeout(n, p) }
	fs["isolated"] = func(n *yaml.Node, p string) { c.Isolated, _ = d.boolean(n, p) }
	return c, func(got map[string]*yaml.Node) {
		if minOK && maxOK && c.MinInstances > c.MaxInstances {
			d.errorf(got["min_instances"], "min_instances", "expected at most max_instances (%d), got %d", c.MaxInstances, c.MinInstances)
		}
	}
}

// size decodes a size name (a workspace catalog entry, checked by the server).
func (d *computeDecoder) size(n *yaml.Node, path string) string {
	v := strings.TrimSpace(d.str(n, path))
	if v == "" || strings.ContainsAny(v, " \t\n/") {
		d.expected(n, path, "a size name like Standard_DS3_v2")
		return ""
	}
	return v
}

// sshSettings decodes the ssh_settings of a cluster or, with instance set, of a compute
// instance (where only ssh_key_value is an input).
func (d *computeDecoder) sshSettings(n *yaml.Node, path string, instance bool) *compute.SSHSettings {
	st := &compute.SSHSettings{}
	key := func(v *yaml.Node, p string) {
		if st.SSHKeyValue = strings.TrimSpace(d.str(v, p)); st.SSHKeyValue != "" && !isPublicKey(st.SSHKeyValue) {
			d.expected(v, p, "an SSH public key line like \"ssh-ed25519 AAAA...\"")
		}
	}
	fs := fields{"ssh_key_value": key}
	if instance {
		readOnly := func(v *yaml.Node, p string) { d.warnf(v, p, "read-only field ignored") }
		fs["admin_username"], fs["ssh_port"] = readOnly, readOnly
	} else {
		fs["admin_username"] = func(v *yaml.Node, p string) { st.AdminUsername = d.str(v, p) }
		fs["admin_password"] = func(v *yaml.Node, p string) { st.AdminPassword = d.str(v, p) }
	}
	d.mapping(n, path, fs)
	if n.Kind != yaml.MappingNode {
		return nil
	}
	if !instance && st.AdminPassword == "" && lookup(n, "ssh_key_value") == nil {
		d.errorf(n, path, "expected admin_password or ssh_key_value")
	}
	return st
}

// networkSettings decodes network_settings, stored and not used.
func (d *computeDecoder) networkSettings(n *yaml.Node, path string) *compute.NetworkSettings {
	ns := &compute.NetworkSettings{}
	readOnly := func(v *yaml.Node, p string) { d.warnf(v, p, "read-only field ignored") }
	d.mapping(n, path, fields{
		"vnet_name":          func(v *yaml.Node, p string) { ns.VNetName = d.str(v, p) },
		"subnet":             func(v *yaml.Node, p string) { ns.Subnet = d.str(v, p) },
		"public_ip_address":  readOnly,
		"private_ip_address": readOnly,
	})
	if n.Kind != yaml.MappingNode {
		return nil
	}
	return ns
}

// provider decodes a cluster's `provider:` (Hangar): `local` (the default), or
// {type: command, create, delete, timeout, env}. A bare scalar names the type.
func (d *computeDecoder) provider(n *yaml.Node, path string, p *compute.Provider) {
	if n.Kind == yaml.ScalarNode {
		if p.Type = d.enum(n, path, compute.ProviderLocal, compute.ProviderCommand); p.Type == compute.ProviderCommand {
			d.errorf(n, path, "provider type command needs create and delete: write {type: command, create: ..., delete: ...}")
		}
		return
	}
	p.Type = ""
	commandOnly := map[string]*yaml.Node{}
	only := func(key string, decode func(*yaml.Node, string)) func(*yaml.Node, string) {
		return func(v *yaml.Node, p string) { commandOnly[key] = v; decode(v, p) }
	}
	got := d.mapping(n, path, fields{
		"type":      func(v *yaml.Node, pp string) { p.Type = d.enum(v, pp, compute.ProviderLocal, compute.ProviderCommand) },
		"create":    only("create", func(v *yaml.Node, pp string) { p.Create = d.hook(v, pp) }),
		"delete":    only("delete", func(v *yaml.Node, pp string) { p.Delete = d.hook(v, pp) }),
		"preempted": only("preempted", func(v *yaml.Node, pp string) { p.Preempted = d.hook(v, pp) }),
		"timeout":   only("timeout", func(v *yaml.Node, pp string) { p.Timeout = d.jobs.timeout(v, pp) }),
		"env":       only("env", func(v *yaml.Node, pp string) { p.Env = d.jobs.envVars(v, pp) }),
	})
	if n.Kind != yaml.MappingNode {
		return
	}
	switch {
	case got["type"] == nil:
		d.errorf(n, join(path, "type"), "required (local or command)")
	case p.Type == compute.ProviderLocal:
		for _, key := range keys(commandOnly) {
			d.errorf(commandOnly[key], join(path, key), "only allowed for provider type command")
		}
	case p.Type == compute.ProviderCommand:
		for _, key := range []string{"create", "delete"} {
			if got[key] == nil {
				d.required(n, join(path, key))
			}
		}
		if p.Timeout == 0 && got["timeout"] == nil {
			p.Timeout = compute.DefaultProviderTimeout
		}
	}
}

// hook decodes a provider command line. When its first word is a relative path to a
// script (it holds a "/"), that path is resolved against the spec's folder, must exist,
// and is made absolute; other commands are kept as written (they run on the server's
// machine, with sh -c).
func (d *computeDecoder) hook(n *yaml.Node, path string) string {
	cmd := strings.TrimSpace(d.str(n, path))
	if cmd == "" {
		d.expected(n, path, "a command or a script path")
		return ""
	}
	first, rest := cmd, ""
	if i := strings.IndexAny(cmd, " \t"); i >= 0 {
		first, rest = cmd[:i], cmd[i:]
	}
	if !strings.Contains(first, "/") || filepath.IsAbs(first) || strings.HasPrefix(first, "~") ||
		strings.ContainsAny(first, "'\"\\$`*?[") || isURI(first) {
		return cmd
	}
	abs, info, ok := d.stat(n, path, first)
	if !ok {
		return ""
	}
	if info.IsDir() {
		d.errorf(n, path, "%s is a directory; expected a script", first)
		return ""
	}
	return binding.QuoteWord(abs) + rest
}
