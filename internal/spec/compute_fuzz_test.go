package spec

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/compute"
)

// FuzzParseCompute: no input panics, every failure is a non-empty ErrorList naming the
// file and locating each problem, and every accepted spec keeps its invariants and
// encodes as JSON.
func FuzzParseCompute(f *testing.F) {
	files := map[string]string{}
	for k, v := range computeFiles {
		files[k] = v
	}
	paths, _ := filepath.Glob("testdata/compute/*.txtar")
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		a := parseArchive(string(data))
		for _, file := range a.files {
			if file.name != "args" && file.name != "compute.yml" && !strings.HasPrefix(file.name, "want.") {
				files[file.name] = file.data
			}
		}
		yml, _ := a.get("compute.yml")
		args, _ := a.get("args")
		f.Add([]byte(yml), strings.TrimSpace(args))
	}
	f.Add([]byte(poolOK+"min_instances: 1\n"), "max_instances=0")
	f.Add([]byte(sshOK), "ssh_settings.ssh_port=abc")
	f.Add([]byte("name: a1\ntype: ssh\naddress: '[::1]'\nssh_settings: {admin_username: u, admin_password: p}\n"), "")
	f.Add([]byte("a: &a [*a]\n"), "")
	f.Add([]byte("name: hpc\ntype: slurm\ntime_limit: 99999-0\n"), "login.address=h")
	dir := writeTree(f, files)
	f.Setenv("HOME", dir)
	f.Fuzz(func(t *testing.T, data []byte, set string) {
		var sets []string
		if set != "" {
			sets = strings.Split(set, "\n")
		}
		s, _, err := ParseCompute("compute.yml", data, dir, sets)
		if err != nil {
			var list ErrorList
			if !errors.As(err, &list) || len(list) == 0 {
				t.Fatalf("error is not a non-empty ErrorList: %T %v", err, err)
			}
			for _, e := range list {
				if e.File != "compute.yml" || e.Msg == "" || (e.Path == "" && e.Line == 0 && !strings.HasPrefix(e.Msg, "malformed YAML")) {
					t.Fatalf("bad error %#v", e)
				}
			}
			return
		}
		checkComputeInvariants(t, s)
		if _, err := json.Marshal(s); err != nil {
			t.Fatalf("spec does not encode: %v", err)
		}
	})
}

// checkComputeInvariants fails when an accepted spec breaks a rule the parser enforces.
func checkComputeInvariants(t *testing.T, s *compute.Spec) {
	t.Helper()
	if !slices.Contains(compute.Types, s.Type) {
		t.Fatalf("type %q", s.Type)
	}
	if !targetName.MatchString(s.Name) {
		t.Fatalf("name %q", s.Name)
	}
	kinds := map[string]bool{
		compute.TypeLocal: s.Local != nil, compute.TypeCluster: s.Cluster != nil, compute.TypeInstance: s.Instance != nil,
		compute.TypeSSH: s.SSH != nil, compute.TypeSlurm: s.Slurm != nil, compute.TypeKubernetes: s.Kubernetes != nil,
		compute.TypeServerless: s.Serverless != nil,
	}
	for typ, set := range kinds {
		if set != (typ == s.Type) {
			t.Fatalf("type %s but %s part set=%v", s.Type, typ, set)
		}
	}
	if c := s.Cluster; c != nil && (c.MinInstances < 0 || c.MaxInstances < 1 || c.MinInstances > c.MaxInstances ||
		c.IdleTimeBeforeScaleDown < 0 || c.ProvisionTimeout <= 0 || c.Size == "") {
		t.Fatalf("cluster %+v", c)
	}
	if c := s.Cluster; c != nil && c.Provider.Type == compute.ProviderCommand && (c.Provider.Create == "" || c.Provider.Delete == "" || c.Provider.Timeout <= 0) {
		t.Fatalf("provider %+v", c.Provider)
	}
	if p := s.Serverless; p != nil {
		checkServerlessInvariants(t, s.Name, p)
	}
	if s.SSH != nil {
		checkHostInvariants(t, &s.SSH.SSHHost)
	}
	if s.Slurm != nil && s.Slurm.Login != nil {
		checkHostInvariants(t, s.Slurm.Login)
	}
	if s.Slurm != nil && s.Slurm.TimeLimitSeconds < 0 {
		t.Fatalf("slurm %+v", s.Slurm)
	}
	if k := s.Kubernetes; k != nil && !dnsLabel.MatchString(k.Namespace) {
		t.Fatalf("namespace %q", k.Namespace)
	}
}

func checkHostInvariants(t *testing.T, h *compute.SSHHost) {
	t.Helper()
	if h.Host == "" || h.Port < 1 || h.Port > 65535 || h.AdminUsername == "" || h.WorkDir == "" ||
		(h.AdminPassword == "" && h.PrivateKey == "") || (h.HostKey != "" && h.KnownHosts != "") {
		t.Fatalf("ssh host %+v", h)
	}
}
