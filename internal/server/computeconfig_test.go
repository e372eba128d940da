package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/compute"
)

func TestOwnerFields(t *testing.T) {
	hooks := compute.Provider{Type: compute.ProviderCommand, Create: "./up.sh", Delete: "./down.sh", Preempted: "./gone.sh",
		Env: map[string]string{"B": "2", "A": "1"}}
	for _, tc := range []struct {
		name string
		spec compute.Spec
		want []string
	}{
		{"local provider", compute.Spec{Cluster: &compute.ClusterSpec{Provider: compute.Provider{Type: compute.ProviderLocal}}}, nil},
		{"cluster hooks", compute.Spec{Cluster: &compute.ClusterSpec{Provider: hooks}}, []string{
			"cluster.provider.create=./up.sh", "cluster.provider.delete=./down.sh",
			"cluster.provider.preempted=./gone.sh", `cluster.provider.env={"A":"1","B":"2"}`, "cluster.provider.type=command"}},
		{"a local provider with a hook", compute.Spec{Cluster: &compute.ClusterSpec{Provider: compute.Provider{Type: compute.ProviderLocal, Create: "x"}}},
			[]string{"cluster.provider.create=x"}},
		{"instance", compute.Spec{Instance: &compute.InstanceSpec{Provider: compute.Provider{Type: compute.ProviderCommand, Create: "c"}}},
			[]string{"instance.provider.create=c", "instance.provider.type=command"}},
		{"setup scripts run in the box", compute.Spec{Instance: &compute.InstanceSpec{SetupScripts: &compute.SetupScripts{
			StartupScript: &compute.SetupScript{Path: "s.sh", Content: "echo hi"}}}}, nil},
		{"serverless", compute.Spec{Serverless: &compute.ServerlessSpec{Provider: compute.Provider{Env: map[string]string{"BASH_ENV": "$(id)"}}}},
			[]string{`serverless.provider.env={"BASH_ENV":"$(id)"}`}},
		{"several parts", compute.Spec{Type: compute.TypeInstance, Instance: &compute.InstanceSpec{},
			Cluster: &compute.ClusterSpec{Provider: compute.Provider{Delete: "d"}}}, []string{"cluster.provider.delete=d"}},
		{"kubeconfig", compute.Spec{Kubernetes: &compute.KubernetesSpec{Kubeconfig: "/tmp/kc"}}, []string{"kubernetes.kubeconfig=/tmp/kc"}},
		{"slurm here", compute.Spec{Slurm: &compute.SlurmSpec{SlurmConf: "/etc/slurm.conf", SbatchArgs: []string{"--export=ALL"}}},
			[]string{"slurm.slurm_conf=/etc/slurm.conf", `slurm.sbatch_args=["--export=ALL"]`}},
		{"slurm through a login host", compute.Spec{Slurm: &compute.SlurmSpec{Login: &compute.SSHHost{Host: "login"},
			SlurmConf: "/etc/slurm.conf", SbatchArgs: []string{"--export=ALL"}}}, nil},
		{"known_hosts", compute.Spec{SSH: &compute.SSHSpec{SSHHost: compute.SSHHost{Host: "vm", KnownHosts: "/k"}},
			Slurm: &compute.SlurmSpec{Login: &compute.SSHHost{KnownHosts: "/l"}}}, []string{"ssh.known_hosts=/k", "slurm.login.known_hosts=/l"}},
		{"a pinned host key", compute.Spec{SSH: &compute.SSHSpec{SSHHost: compute.SSHHost{Host: "vm", HostKey: "ssh-ed25519 AAAA"}}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, f := range ownerFields(&tc.spec) {
				got = append(got, f.path+"="+f.value)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ownerFields (-want +got):\n%s", diff)
			}
		})
	}
}

func TestChangedOwnerFields(t *testing.T) {
	cluster := func(p compute.Provider) *compute.Spec {
		return &compute.Spec{Cluster: &compute.ClusterSpec{MaxInstances: 2, Provider: p}}
	}
	hooks := compute.Provider{Type: compute.ProviderCommand, Create: "up", Delete: "down"}
	for _, tc := range []struct {
		name     string
		old, new *compute.Spec
		want     []string
	}{
		{"new without hooks", nil, cluster(compute.Provider{}), nil},
		{"new with hooks", nil, cluster(hooks), []string{"cluster.provider.create", "cluster.provider.delete", "cluster.provider.type"}},
		{"hooks kept", cluster(hooks), cluster(hooks), nil},
		{"create changed", cluster(hooks), cluster(compute.Provider{Type: compute.ProviderCommand, Create: "evil", Delete: "down"}),
			[]string{"cluster.provider.create"}},
		{"hooks removed", cluster(hooks), cluster(compute.Provider{}),
			[]string{"cluster.provider.create", "cluster.provider.delete", "cluster.provider.type"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, f := range changedOwnerFields(tc.old, tc.new) {
				got = append(got, f.path)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("changed (-want +got):\n%s", diff)
			}
		})
	}
}

// putComputeAs sends a compute spec (JSON) as token to POST /api/computes or PUT
// /api/computes/{name}, and returns the status and body.
func putComputeAs(t *testing.T, ts *testServer, token, method, body string) (int, string) {
	t.Helper()
	var spec struct{ Name string }
	if err := json.Unmarshal([]byte(body), &spec); err != nil {
		t.Fatal(err)
	}
	path := "/api/computes"
	if method == http.MethodPut {
		path += "/" + spec.Name
	}
	return ts.rawBody(t, token, method, path, body)
}

// A compute operator creates and scales clusters of the built-in providers, and updates one an
// owner gave hooks to as long as the hooks stay; setting, changing or removing a hook, a
// kubeconfig or a local Slurm target's sbatch arguments is refused with 403 naming the field
// and the role. An owner sets them.
func TestComputeOperatorCannotSetHooks(t *testing.T) {
	ts := newTestServer(t)
	for _, typ := range []string{compute.TypeCluster, compute.TypeInstance, compute.TypeKubernetes, compute.TypeSlurm} {
		ts.ctrl.Backends[typ] = ts.fake // the same map the server reads
	}
	op := newUserToken(t, ts, "olga", api.RoleComputeOperator)
	const hooked = `{"name":"hookd","type":"cluster","cluster":{"size":"local-quarter","min_instances":0,"max_instances":%d,` +
		`"provider":{"type":"command","create":"wc -c $HANGAR_HOME/token > /tmp/out; exit 1","delete":"true","timeout":30,` +
		`"env":{"CLOUD_KEY":"cloud-secret"}}}}`
	steps := []struct {
		name, token, method, body string
		status                    int
		says                      []string
	}{
		{"operator: reproduction of issue 27", op, http.MethodPost, strings.Replace(hooked, "%d", "1", 1), http.StatusForbidden,
			[]string{"olga", "role compute-operator", "cluster.provider.create is a command the server runs", "only the role owner", "cluster.provider.type"}},
		{"operator: local provider", op, http.MethodPost,
			`{"name":"pool","type":"cluster","cluster":{"size":"local-quarter","max_instances":1,"provider":{"type":"local"}}}`, http.StatusCreated, nil},
		{"operator: scales it", op, http.MethodPut,
			`{"name":"pool","type":"cluster","cluster":{"size":"local-quarter","max_instances":3,"provider":{"type":"local"}}}`, http.StatusOK, nil},
		{"operator: a hook on a local provider", op, http.MethodPut,
			`{"name":"pool","type":"cluster","cluster":{"size":"local-quarter","max_instances":3,"provider":{"type":"local","delete":"id"}}}`,
			http.StatusForbidden, []string{"cluster.provider.delete"}},
		{"operator: hooks in an instance part", op, http.MethodPut,
			`{"name":"pool","type":"cluster","cluster":{"size":"local-quarter","max_instances":3},"instance":{"provider":{"create":"id"}}}`,
			http.StatusForbidden, []string{"instance.provider.create"}},
		{"operator: provider env", op, http.MethodPost,
			`{"name":"sl","type":"serverless","serverless":{"sizes":[{"name":"local-quarter"}],"provider":{"env":{"BASH_ENV":"$(id)"}}}}`,
			http.StatusForbidden, []string{"serverless.provider.env"}},
		{"operator: kubeconfig", op, http.MethodPost,
			`{"name":"k8s","type":"kubernetes","kubernetes":{"namespace":"default","kubeconfig":"/tmp/kc"}}`,
			http.StatusForbidden, []string{"kubernetes.kubeconfig"}},
		{"operator: local slurm's sbatch args", op, http.MethodPost,
			`{"name":"hpc","type":"slurm","slurm":{"sbatch_args":["--export=ALL,BASH_ENV=$(id>/tmp/x)"]}}`,
			http.StatusForbidden, []string{"slurm.sbatch_args"}},
		{"owner: hooks", adminToken, http.MethodPost, strings.Replace(hooked, "%d", "1", 1), http.StatusCreated, nil},
		{"operator: scales the owner's hooked cluster", op, http.MethodPut, strings.Replace(hooked, "%d", "4", 1), http.StatusOK, nil},
		{"operator: changes its create hook", op, http.MethodPut,
			strings.Replace(strings.Replace(hooked, "%d", "4", 1), "exit 1", "exit 2", 1), http.StatusForbidden,
			[]string{"cluster.provider.create"}},
		{"operator: removes its hooks", op, http.MethodPut,
			`{"name":"hookd","type":"cluster","cluster":{"size":"local-quarter","max_instances":4,"provider":{"type":"local"}}}`,
			http.StatusForbidden, []string{"cluster.provider.create", "so are cluster.provider.delete, cluster.provider.env, cluster.provider.type"}},
	}
	for _, st := range steps {
		status, body := putComputeAs(t, ts, st.token, st.method, st.body)
		if status != st.status {
			t.Fatalf("%s: %d %s, want %d", st.name, status, body, st.status)
		}
		for _, s := range st.says {
			if !strings.Contains(body, s) {
				t.Errorf("%s: %s, want it to say %q", st.name, body, s)
			}
		}
	}
	got, err := ts.admin.Computes.Get(t.Context(), "hookd")
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.Cluster.MaxInstances != 4 || !strings.HasSuffix(got.Spec.Cluster.Provider.Create, "exit 1") ||
		got.Spec.Cluster.Provider.Env["CLOUD_KEY"] != "cloud-secret" {
		t.Errorf("hookd after the operator's updates, as the owner sees it: %+v", got.Spec.Cluster)
	}
	// The hooks' environment (cloud credentials) is the owner's to read.
	for _, c := range []*api.Client{api.NewClient(ts.url, op), api.NewClient(ts.url, newUserToken(t, ts, "rita", api.RoleReader))} {
		seen, err := c.Computes.Get(t.Context(), "hookd")
		if err != nil {
			t.Fatal(err)
		}
		all, err := c.Computes.List(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		specs := []*compute.Spec{seen.Spec}
		for _, a := range all {
			if a.Name == "hookd" {
				specs = append(specs, a.Spec)
			}
		}
		for _, sp := range specs {
			if v := sp.Cluster.Provider.Env["CLOUD_KEY"]; v != "***" || len(specs) != 2 {
				t.Errorf("a user below owner reads the hook's environment: CLOUD_KEY=%q", v)
			}
		}
	}
}

// A user below owner owns the instance they create, whatever the body claims; only an owner
// creates one on behalf of another user. The workspace token is admin, whatever the body claims.
func TestInstanceOwnerIsTheCreator(t *testing.T) {
	ts := newTestServer(t)
	ts.ctrl.Backends[compute.TypeInstance] = ts.fake
	op := newUserToken(t, ts, "olga", api.RoleComputeOperator)
	boss := newUserToken(t, ts, "bea", api.RoleOwner)
	const inst = `{"name":"%s","type":"instance","instance":{"size":"local-quarter","owner":"root"%s}}`
	for _, tc := range []struct {
		name, token, behalf string
		status              int
		owner               string
	}{
		{"dev1", op, "", http.StatusCreated, "olga"},
		{"dev2", op, `,"create_on_behalf_of":{"user_object_id":"carl"}`, http.StatusForbidden, ""},
		{"dev3", boss, `,"create_on_behalf_of":{"user_object_id":"carl"}`, http.StatusCreated, "carl"},
		{"dev4", boss, "", http.StatusCreated, "bea"},
		{"dev5", adminToken, "", http.StatusCreated, "admin"},
	} {
		body := strings.Replace(strings.Replace(inst, "%s", tc.name, 1), "%s", tc.behalf, 1)
		status, got := putComputeAs(t, ts, tc.token, http.MethodPost, body)
		if status != tc.status {
			t.Errorf("%s: %d %s, want %d", tc.name, status, got, tc.status)
			continue
		}
		if tc.status == http.StatusForbidden {
			if !strings.Contains(got, "instance.create_on_behalf_of.user_object_id") {
				t.Errorf("%s: %s, want the field named", tc.name, got)
			}
			continue
		}
		c, err := ts.admin.Computes.Get(t.Context(), tc.name)
		if err != nil {
			t.Fatal(err)
		}
		if c.Spec.Instance.Owner != tc.owner {
			t.Errorf("%s: owner %q, want %q", tc.name, c.Spec.Instance.Owner, tc.owner)
		}
	}
}
