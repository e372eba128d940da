package server

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/api"
)

var updateRoutes = flag.Bool("update-routes", false, "rewrite docs/routes.md from the server's route table")

// routesDocFile is the page that lists every route and who may call it.
const routesDocFile = "../../docs/routes.md"

const routesDocHead = `# Routes and who may call them

Every route the workspace server registers, and who may call it, as the server's route table
says (` + "`routes.handle(pattern, access, handler)`" + ` in ` + "`internal/server`" + `, the only way a route is
added). This page is generated from that table: ` + "`go test ./internal/server -run TestRoutesDoc`" + `
fails when they disagree, and ` + "`go test ./internal/server -run TestRoutesDoc -update-routes`" + `
rewrites it. ` + "`TestAuthorizationMatrix`" + ` calls every route as every role, a run's token, no token and
bad tokens, and checks that what is refused is what the roles in [users.md](users.md) say.

How to read **who**:
- roles (` + "`owner`, `contributor`, `compute-operator`, `reader`" + `; "every role" is all four): a user of that
  role, with a personal token or a studio session (which also keeps to the studio's allowlist);
  the workspace token is the user ` + "`admin`" + `, an owner. Anyone else gets 403 naming their role and
  the roles the route needs; a missing, revoked, expired or foreign token gets 401. On MLflow's
  paths both come in MLflow's shape (` + "`PERMISSION_DENIED`, `UNAUTHENTICATED`" + `, [mlflow.md](mlflow.md)).
- "a run's token": a live run's own token (its supervisor's, or its processes' through
  ` + "`MLFLOW_TRACKING_TOKEN`" + `). On ` + "`/api/runs/{id}/...`" + ` it reaches only its own run's current attempt, on
  MLflow's routes only its own run's data (and it reads the model registry and its versions'
  files); on the blob routes it reads and adds blobs by hash.
- "public": outside user authentication; the route checks what is said instead.
- "forwards": the route hands the request to the ` + "`/api/`" + ` route of the same path, whose row applies.

Some routes check more in their handler, past the role: a personal token's routes act on the
caller's own tokens (owners: anyone's); what a compute spec makes the server run or read (provider
hooks, a kubeconfig, a local Slurm target's sbatch options, ...) is set or changed by owners only
([security.md](security.md#workspace-configuration)); an instance belongs to its creator, and its
Jupyter and SSH admit its owner and workspace owners; a run's spec carries a fresh run token only
for the run itself. Requests to online endpoints (` + "`/endpoints/<name>/...`" + `) never reach this
table: the router takes them with the endpoint's key.

"audited" names the action an answered request writes to the audit log.
`

// routesDoc renders the route table as docs/routes.md.
func routesDoc(table []route) string {
	rows := slices.Clone(table)
	slices.SortFunc(rows, func(a, b route) int {
		am, ap := splitPattern(a.pattern)
		bm, bp := splitPattern(b.pattern)
		if c := strings.Compare(ap, bp); c != 0 {
			return c
		}
		return strings.Compare(am, bm)
	})
	var b strings.Builder
	b.WriteString(routesDocHead)
	b.WriteString("\n| method | path | who | audited |\n|---|---|---|---|\n")
	for _, r := range rows {
		m, p := splitPattern(r.pattern)
		audit := ""
		if r.access.audit != "" {
			audit = "`" + r.access.audit + "`"
		}
		fmt.Fprintf(&b, "| %s | `%s` | %s | %s |\n", m, p, whoMay(r), audit)
	}
	return b.String()
}

// splitPattern is a pattern's method ("any" when it has none) and path.
func splitPattern(pattern string) (method, path string) {
	if m, p, ok := strings.Cut(pattern, " "); ok {
		return m, p
	}
	return "any", pattern
}

// whoMay says in words who may call a route.
func whoMay(r route) string {
	a := r.access
	switch {
	case a.public:
		return "public: " + publicRoutes[r.pattern]
	case a.forward:
		return "forwards to `/api/...`"
	case len(a.roles) == 0 && a.runs:
		return "a run's own token only"
	}
	var who []string
	if len(a.roles) == len(api.Roles) {
		who = append(who, "every role")
	} else {
		for _, role := range api.Roles { // the roles' own order
			if slices.Contains(a.roles, role) {
				who = append(who, "`"+role+"`")
			}
		}
	}
	if a.runs {
		who = append(who, "a run's token")
	}
	return strings.Join(who, ", ")
}

// docServer is a server with every optional route family on (OIDC), for the page.
func docServer(t *testing.T) []route {
	t.Helper()
	ts := newTestServer(t)
	cfg := ts.srv.cfg
	cfg.OIDC = &OIDC{Issuer: "https://issuer.example", ClientID: "hangar"}
	srv := New(cfg)
	srv.Handler()
	return srv.registered()
}

// docs/routes.md is the route table, route by route.
func TestRoutesDoc(t *testing.T) {
	want := routesDoc(docServer(t))
	if *updateRoutes {
		if err := os.WriteFile(routesDocFile, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(routesDocFile)
	if err != nil {
		t.Fatalf("%v (make it with -update-routes)", err)
	}
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("%s disagrees with the route table (-table +page); run go test ./internal/server -run TestRoutesDoc -update-routes:\n%s",
			filepath.Base(routesDocFile), diff)
	}
}
