package spec

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"github.com/hangar-ml/hangar/internal/pattern"
	"math"
	"net"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/hangar-ml/hangar/internal/compute"
)

var (
	hostName      = pattern.New(`^[A-Za-z0-9_]([A-Za-z0-9_.-]*[A-Za-z0-9_])?$`)
	publicKeyLine = pattern.New(`^((?:ssh|ecdsa|sk)-[A-Za-z0-9@.-]+)[ \t]+([A-Za-z0-9+/]+={0,2})(?:[ \t].*)?$`)
)

// sshFields adds the keys of `type: virtualmachine`/`ssh` (SPEC.md §1.4) and Hangar's.
func (d *computeDecoder) sshFields(fs fields, s *compute.Spec) (*compute.SSHSpec, func(map[string]*yaml.Node)) {
	v := &compute.SSHSpec{}
	check := d.sshHostFields(fs, &v.SSHHost)
	fs["require_container"] = func(n *yaml.Node, p string) { v.RequireContainer, _ = d.boolean(n, p) }
	return v, func(got map[string]*yaml.Node) { check(nil, "", got, s.ResourceID) }
}

// sshLogin decodes a Slurm `login:` host: the keys of an ssh target, resource_id
// included, without require_container.
func (d *computeDecoder) sshLogin(n *yaml.Node, path string) *compute.SSHHost {
	h := &compute.SSHHost{}
	var resourceID string
	fs := fields{"resource_id": func(v *yaml.Node, p string) { resourceID = strings.TrimSpace(d.str(v, p)) }}
	check := d.sshHostFields(fs, h)
	got := d.mapping(n, path, fs)
	if n.Kind != yaml.MappingNode {
		return nil
	}
	check(n, path, got, resourceID)
	return h
}

// sshHostFields adds an SSH host's keys to fs. The returned check, given the mapping
// that holds them (nil at the top), its path, the decoded keys and resource_id, settles
// the host, the port and the login.
func (d *computeDecoder) sshHostFields(fs fields, h *compute.SSHHost) func(*yaml.Node, string, map[string]*yaml.Node, string) {
	h.Port, h.WorkDir = compute.DefaultSSHPort, compute.DefaultWorkDir
	var addrPort, settingsPort int
	var settingsGot map[string]*yaml.Node
	fs["address"] = func(n *yaml.Node, p string) {
		if host, port, ok := d.hostPort(n, p, d.str(n, p)); ok {
			h.Host, addrPort = host, port
		}
	}
	fs["ssh_settings"] = func(n *yaml.Node, p string) {
		settingsGot = d.mapping(n, p, fields{
			"admin_username":       func(v *yaml.Node, p string) { h.AdminUsername = strings.TrimSpace(d.str(v, p)) },
			"admin_password":       func(v *yaml.Node, p string) { h.AdminPassword = d.str(v, p) },
			"ssh_private_key_file": func(v *yaml.Node, p string) { d.privateKey(v, p, h) },
			"ssh_port":             func(v *yaml.Node, p string) { settingsPort, _ = d.port(v, p) },
		})
	}
	fs["host_key"] = func(n *yaml.Node, p string) {
		if h.HostKey = strings.TrimSpace(d.str(n, p)); h.HostKey != "" && !isPublicKey(h.HostKey) {
			d.expected(n, p, "a public key line like \"ssh-ed25519 AAAA...\" (as in known_hosts, without the host)")
		}
	}
	fs["known_hosts"] = func(n *yaml.Node, p string) { h.KnownHosts, _ = d.localFile(n, p) }
	fs["work_dir"] = func(n *yaml.Node, p string) {
		if h.WorkDir = strings.TrimSpace(d.str(n, p)); h.WorkDir == "" || strings.ContainsAny(h.WorkDir, "\n\x00") {
			d.expected(n, p, "a directory path")
		}
	}
	return func(parent *yaml.Node, path string, got map[string]*yaml.Node, resourceID string) {
		if got["address"] == nil {
			addrPort = d.hostFromResourceID(parent, path, got["resource_id"], resourceID, h)
		}
		switch {
		case settingsPort != 0 && addrPort != 0 && settingsPort != addrPort:
			d.errorf(settingsGot["ssh_port"], join(path, "ssh_settings.ssh_port"),
				"%d disagrees with the port in the address (%d)", settingsPort, addrPort)
		case settingsPort != 0:
			h.Port = settingsPort
		case addrPort != 0:
			h.Port = addrPort
		}
		if got["host_key"] != nil && got["known_hosts"] != nil {
			d.errorf(got["known_hosts"], join(path, "known_hosts"), "host_key and known_hosts are mutually exclusive")
		}
		settings := got["ssh_settings"]
		switch {
		case settings == nil:
			d.errorf(parent, join(path, "ssh_settings"), "required (admin_username and admin_password or ssh_private_key_file)")
		case settings.Kind != yaml.MappingNode:
		case settingsGot["admin_username"] == nil:
			d.required(settings, join(path, "ssh_settings.admin_username"))
		}
		if settings != nil && settings.Kind == yaml.MappingNode &&
			settingsGot["admin_password"] == nil && settingsGot["ssh_private_key_file"] == nil {
			d.errorf(settings, join(path, "ssh_settings"), "expected admin_password or ssh_private_key_file")
		}
	}
}

// hostFromResourceID names the host from resource_id when there is no address: a plain
// host name (host[:port]) as it is, and an Azure resource id
// (/subscriptions/.../virtualMachines/<vm>) by its last segment, the VM name, with a
// warning. It returns the port resource_id gives, or 0.
func (d *computeDecoder) hostFromResourceID(parent *yaml.Node, path string, rid *yaml.Node, resourceID string, h *compute.SSHHost) int {
	switch {
	case rid == nil:
		d.errorf(parent, join(path, "address"), "required (a host or host:port; resource_id may name the host instead)")
		return 0
	case resourceID == "":
		return 0
	case strings.Contains(resourceID, "/"):
		segs := strings.Split(strings.TrimRight(resourceID, "/"), "/")
		vm := segs[len(segs)-1]
		if vm == "" || !hostName.MatchString(vm) {
			d.errorf(rid, join(path, "address"), "required: resource_id %s names no host; give address: <host>[:port]", quote(resourceID))
			return 0
		}
		h.Host = vm
		d.warnf(rid, join(path, "resource_id"), "an Azure resource id: connecting to its last segment %s as the host (give address: to choose)", quote(vm))
		return 0
	}
	host, port, ok := d.hostPort(rid, join(path, "resource_id"), resourceID)
	if ok {
		h.Host = host
	}
	return port
}

// hostPort parses host, host:port, [ipv6]:port or a bare IPv6 address; port is 0 when
// absent.
func (d *computeDecoder) hostPort(n *yaml.Node, path, s string) (string, int, bool) {
	s = strings.TrimSpace(s)
	host, portText, hasPort := s, "", false
	switch {
	case strings.Contains(s, "@"):
		d.errorf(n, path, "%s: give the user in ssh_settings.admin_username, not in the address", quote(s))
		return "", 0, false
	case strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]"):
		host = s[1 : len(s)-1]
	case strings.HasPrefix(s, "["):
		var err error
		if host, portText, err = net.SplitHostPort(s); err != nil {
			host = ""
		}
		hasPort = err == nil
	case strings.Count(s, ":") == 1:
		host, portText, hasPort = strings.Cut(s, ":")
	}
	port := 0
	if hasPort {
		p, err := strconv.Atoi(portText)
		if err != nil || p < 1 || p > 65535 {
			d.errorf(n, path, "expected a port from 1 to 65535, got %s", quote(portText))
			return "", 0, false
		}
		port = p
	}
	if ip := net.ParseIP(host); ip == nil && (len(host) > 253 || !hostName.MatchString(host)) {
		d.expected(n, path, "a host or host:port")
		return "", 0, false
	}
	return host, port, true
}

// privateKey reads ssh_private_key_file into the host's PrivateKey.
func (d *computeDecoder) privateKey(n *yaml.Node, path string, h *compute.SSHHost) {
	abs, ok := d.localFile(n, path)
	if !ok {
		return
	}
	data, err := readSmall(abs)
	if err != nil {
		d.errorf(n, path, "%s: %v", n.Value, unwrapPathError(err))
		return
	}
	text := strings.TrimSpace(string(data))
	first, _, _ := strings.Cut(text, "\n")
	switch {
	case strings.HasPrefix(text, "-----BEGIN ") && strings.Contains(first, "PRIVATE KEY-----"):
		h.PrivateKeyFile, h.PrivateKey = abs, string(data)
	case isPublicKey(first):
		d.errorf(n, path, "%s is a public key; give the private key file", n.Value)
	default:
		d.errorf(n, path, "%s does not look like a private key (expected a PEM block such as -----BEGIN OPENSSH PRIVATE KEY-----)", n.Value)
	}
}

// isPublicKey reports whether s is an authorized_keys-style line "<type> <base64> [comment]"
// whose encoded key names the same type.
func isPublicKey(s string) bool {
	m := publicKeyLine.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return false
	}
	blob, err := base64.StdEncoding.DecodeString(m[2])
	if err != nil || len(blob) < 4 {
		return false
	}
	n := binary.BigEndian.Uint32(blob)
	return uint64(n) <= uint64(len(blob)-4) && string(blob[4:4+n]) == m[1]
}

var (
	slurmName     = pattern.New(`^[A-Za-z0-9_][A-Za-z0-9_.,-]*$`)
	slurmMem      = pattern.New(`^(?i)\d{1,12}[KMGT]?$`)
	slurmGres     = pattern.New(`^[A-Za-z0-9_]+(:[A-Za-z0-9_.-]+)*(,[A-Za-z0-9_]+(:[A-Za-z0-9_.-]+)*)*$`)
	slurmDuration = pattern.New(`^(?:(\d{1,5})-(\d{1,5})(?::(\d{1,5})(?::(\d{1,5}))?)?|(\d{1,7})(?::(\d{1,5})(?::(\d{1,5}))?)?)$`)
	priorities    = []string{"low", "medium", "high"}
)

// slurmFields adds the keys of `type: slurm` (Hangar).
func (d *computeDecoder) slurmFields(fs fields) (*compute.SlurmSpec, func(map[string]*yaml.Node)) {
	sl := &compute.SlurmSpec{}
	name := func(dst *string) func(*yaml.Node, string) {
		return func(n *yaml.Node, p string) {
			if *dst = strings.TrimSpace(d.str(n, p)); !slurmName.MatchString(*dst) {
				d.expected(n, p, "a Slurm name (letters, digits, _ . , -)")
			}
		}
	}
	fs["partition"], fs["account"], fs["qos"] = name(&sl.Partition), name(&sl.Account), name(&sl.QOS)
	fs["login"] = func(n *yaml.Node, p string) { sl.Login = d.sshLogin(n, p) }
	fs["max_nodes"] = func(n *yaml.Node, p string) { sl.MaxNodes, _ = d.boundedInt(n, p, 0, math.MaxInt32) }
	fs["time_limit"] = func(n *yaml.Node, p string) { sl.TimeLimitSeconds = d.slurmTime(n, p) }
	fs["sbatch_args"] = func(n *yaml.Node, p string) {
		sl.SbatchArgs = d.stringList(n, p)
		if n.Kind != yaml.SequenceNode {
			return
		}
		for i, c := range n.Content {
			if c = resolve(c); c.Kind == yaml.ScalarNode && (!strings.HasPrefix(c.Value, "-") || strings.ContainsAny(c.Value, "\n\x00")) {
				d.errorf(c, fmt.Sprintf("%s[%d]", p, i), "expected an sbatch option like --constraint=a100, got %s", quote(c.Value))
			}
		}
	}
	fs["size_map"] = func(n *yaml.Node, p string) { sl.SizeMap = d.sizeMap(n, p) }
	fs["priority_map"] = func(n *yaml.Node, p string) { sl.PriorityMap = d.priorityMap(n, p) }
	fs["slurm_conf"] = nil // resolved by the check, which knows whether there is a login host
	return sl, func(got map[string]*yaml.Node) {
		conf := got["slurm_conf"]
		switch {
		case conf == nil:
		case sl.Login != nil || got["login"] != nil:
			// a path on the login host
			if sl.SlurmConf = strings.TrimSpace(d.str(conf, "slurm_conf")); sl.SlurmConf == "" {
				d.expected(conf, "slurm_conf", "a path on the login host")
			}
		default:
			sl.SlurmConf, _ = d.localFile(conf, "slurm_conf")
		}
	}
}

// slurmTime decodes a default time limit in Slurm's --time syntax ("30", "1:00:00",
// "2-12", "2-12:30:00"); a YAML integer is minutes, as in Slurm. It returns seconds.
func (d *computeDecoder) slurmTime(n *yaml.Node, path string) int64 {
	m := slurmDuration.FindStringSubmatch(strings.TrimSpace(n.Value))
	if n.Kind != yaml.ScalarNode || (n.ShortTag() != "!!str" && n.ShortTag() != "!!int") || m == nil {
		d.expected(n, path, "a Slurm time like 30 (minutes), 1:00:00 or 2-12:00:00")
		return 0
	}
	num := func(i int) int64 {
		v, _ := strconv.ParseInt(m[i], 10, 64)
		return v
	}
	var secs int64
	switch {
	case m[1] != "": // days-hours[:minutes[:seconds]]
		secs = num(1)*86400 + num(2)*3600 + num(3)*60 + num(4)
	case m[7] != "": // hours:minutes:seconds
		secs = num(5)*3600 + num(6)*60 + num(7)
	default: // minutes[:seconds]
		secs = num(5)*60 + num(6)
	}
	if secs <= 0 || secs > math.MaxInt32 {
		d.errorf(n, path, "expected a time limit > 0 and < 68 years, got %s", quote(n.Value))
		return 0
	}
	return secs
}

// sizeMap decodes size_map: Hangar size name → sbatch resources.
func (d *computeDecoder) sizeMap(n *yaml.Node, path string) map[string]compute.SlurmSize {
	out := map[string]compute.SlurmSize{}
	for _, p := range d.entries(n, path) {
		sp, v := join(path, p.key.Value), resolve(p.value)
		if v.Kind != yaml.MappingNode {
			d.expected(v, sp, "a mapping of cpus_per_task, mem and gres")
			continue
		}
		var size compute.SlurmSize
		d.mapping(v, sp, fields{
			"cpus_per_task": func(v *yaml.Node, p string) { size.CPUsPerTask, _ = d.boundedInt(v, p, 1, math.MaxInt32) },
			"mem": func(v *yaml.Node, p string) {
				if size.Mem = strings.ToUpper(strings.TrimSpace(d.str(v, p))); !slurmMem.MatchString(size.Mem) {
					d.expected(v, p, "a Slurm memory size like 16G (digits, then K, M, G or T)")
				}
			},
			"gres": func(v *yaml.Node, p string) {
				if size.Gres = strings.TrimSpace(d.str(v, p)); !slurmGres.MatchString(size.Gres) {
					d.expected(v, p, "a Slurm gres like gpu:2 or gpu:a100:1")
				}
			},
		})
		out[p.key.Value] = size
	}
	return out
}

// priorityMap decodes priority_map: low, medium, high → sbatch --nice and --qos.
func (d *computeDecoder) priorityMap(n *yaml.Node, path string) map[string]compute.SlurmPriority {
	out := map[string]compute.SlurmPriority{}
	for _, p := range d.entries(n, path) {
		sp, v := join(path, p.key.Value), resolve(p.value)
		level := matchEnum(p.key.Value, priorities)
		switch {
		case level == "":
			d.errorf(p.key, sp, "expected one of %s", strings.Join(priorities, ", "))
			continue
		case v.Kind != yaml.MappingNode:
			d.expected(v, sp, "a mapping of nice and qos")
			continue
		}
		if _, dup := out[level]; dup {
			d.errorf(p.key, sp, "duplicate priority %s", level)
			continue
		}
		var pr compute.SlurmPriority
		d.mapping(v, sp, fields{
			"nice": func(v *yaml.Node, p string) { pr.Nice, _ = d.boundedInt(v, p, -2147483645, 2147483645) },
			"qos": func(v *yaml.Node, p string) {
				if pr.QOS = strings.TrimSpace(d.str(v, p)); !slurmName.MatchString(pr.QOS) {
					d.expected(v, p, "a Slurm name (letters, digits, _ . , -)")
				}
			},
		})
		out[level] = pr
	}
	return out
}
