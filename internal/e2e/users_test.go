package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/home"
	"github.com/hangar-ml/hangar/internal/job"
)

// user is a CLI user of a workspace over its URL, with their own config directory (where
// `hangar login` stores credentials) and no $HANGAR_TOKEN.
type user struct {
	w      *ws
	url    string
	config string
}

func (w *ws) user(url string) *user {
	return &user{w: w, url: url, config: w.t.TempDir()}
}

// run runs the CLI as the user, stdin given.
func (u *user) run(stdin string, args ...string) result {
	u.w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, hangarBin, args...)
	// w.env drops every HANGAR_ variable, HANGAR_TOKEN included, and points HANGAR_HOME at
	// the workspace; the user reaches the server by URL, with their stored login only.
	cmd.Env = append(u.w.env(), "HANGAR_URL="+u.url, "XDG_CONFIG_HOME="+u.config)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		u.w.t.Fatalf("run hangar %v: %v", args, err)
	}
	return r
}

func (u *user) ok(args ...string) result {
	u.w.t.Helper()
	r := u.run("", args...)
	if r.code != 0 {
		u.w.t.Fatalf("hangar %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r
}

// The owner creates a reader and a contributor, who log in with `hangar login` (credentials in
// their config directory, no $HANGAR_TOKEN). The reader's job is refused with their role named;
// the contributor's runs and `job show` names them; the audit log shows the users' creation and
// a compute change; a revoked token is refused on the next command.
func TestUsersRolesLoginAudit(t *testing.T) {
	w := newWS(t)
	si, err := (&home.Home{Dir: w.home}).ReadServerInfo()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"job.yml":  "command: echo hello from carl\n",
		"pool.yml": "name: pool\ntype: amlcompute\nsize: local-quarter\nmax_instances: 1\nidle_time_before_scale_down: 60\n",
	})
	// The owner here is the workspace token (the local CLI), the user "admin".
	tokens := map[string]string{}
	for name, role := range map[string]string{"rita": "reader", "carl": "contributor"} {
		tokens[name] = strings.TrimSpace(w.ok("user", "create", name, "--role", role).stdout)
		if !strings.HasPrefix(tokens[name], "hpt_") {
			t.Fatalf("user create %s printed %q, want the token", name, tokens[name])
		}
	}
	w.ok("compute", "create", "-f", filepath.Join(dir, "pool.yml"))
	// rita, made without one, is linked to the subject she signs in to the studio as.
	w.ok("user", "link-oidc", "rita", "sub-rita-248289761001")
	if list := w.ok("user", "list").stdout; !strings.Contains(list, "sub-rita-248289761001") {
		t.Errorf("user list does not show rita's OpenID Connect subject:\n%s", list)
	}

	rita, carl := w.user(si.URL), w.user(si.URL)
	if r := rita.run(tokens["rita"], "login", "--with-token"); r.code != 0 || !strings.Contains(r.stderr, "as rita (reader)") {
		t.Fatalf("rita's login: exit %d, %s", r.code, r.stderr)
	}
	if r := carl.run(tokens["carl"], "login", "--with-token"); r.code != 0 {
		t.Fatalf("carl's login: exit %d, %s", r.code, r.stderr)
	}
	if b, err := os.ReadFile(filepath.Join(rita.config, "hangar", "credentials.json")); err != nil || !strings.Contains(string(b), si.URL) {
		t.Fatalf("rita's credentials: %v %s", err, b)
	}

	if r := rita.run("", "job", "create", "-f", filepath.Join(dir, "job.yml")); r.code == 0 || !strings.Contains(r.stderr, "role reader") {
		t.Fatalf("rita's job create: exit %d, %s; want a refusal naming her role", r.code, r.stderr)
	}
	rita.ok("job", "list") // a reader reads

	var d api.RunDetail
	if err := json.Unmarshal([]byte(carl.ok("job", "create", "-f", filepath.Join(dir, "job.yml"), "-o", "json").stdout), &d); err != nil {
		t.Fatal(err)
	}
	w.waitStatus(d.ID, 2*time.Minute, job.Completed)
	if show := rita.ok("job", "show", d.ID).stdout; !strings.Contains(show, "Submitted by: carl") {
		t.Errorf("job show does not name carl:\n%s", show)
	}
	// Whose jobs: carl's own (--mine), carl's as rita lists them (--user), none of rita's.
	listed := func(u *user, args ...string) []string {
		var runs []api.RunDetail
		if err := json.Unmarshal([]byte(u.ok(append([]string{"job", "list", "-o", "json"}, args...)...).stdout), &runs); err != nil {
			t.Fatal(err)
		}
		out := []string{}
		for _, r := range runs {
			out = append(out, r.ID)
		}
		return out
	}
	if got := listed(carl, "--mine"); len(got) != 1 || got[0] != d.ID {
		t.Errorf("carl's job list --mine: %v, want [%s]", got, d.ID)
	}
	if got := listed(rita, "--user", "carl"); len(got) != 1 || got[0] != d.ID {
		t.Errorf("rita's job list --user carl: %v, want [%s]", got, d.ID)
	}
	if got := listed(rita, "--mine"); len(got) != 0 {
		t.Errorf("rita's job list --mine: %v, want none", got)
	}

	if r := carl.run("", "audit", "list"); r.code == 0 || !strings.Contains(r.stderr, "role contributor") {
		t.Errorf("carl read the audit log: exit %d, %s", r.code, r.stderr)
	}
	var entries []api.AuditEntry
	if err := json.Unmarshal([]byte(w.ok("audit", "list", "-o", "json").stdout), &entries); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, e := range entries {
		got[e.User+" "+e.Action+" "+e.Object] = true
	}
	for _, want := range []string{"admin user.create users/rita", "admin user.create users/carl", "admin compute.create computes/pool"} {
		if !got[want] {
			t.Errorf("audit list lacks %q: %+v", want, entries)
		}
	}
	if table := w.ok("audit", "list").stdout; !strings.Contains(table, "computes/pool") {
		t.Errorf("audit list's table lacks the compute:\n%s", table)
	}

	// carl revokes his own token: the next command is refused, with the reason.
	carl.ok("token", "revoke", "first")
	if r := carl.run("", "job", "list"); r.code == 0 || !strings.Contains(r.stderr, "revoked") {
		t.Errorf("job list with a revoked token: exit %d, %s", r.code, r.stderr)
	}
	if audit := w.ok("audit", "list", "--user", "carl").stdout; !strings.Contains(audit, "token.revoke") {
		t.Errorf("audit list --user carl lacks the revocation:\n%s", audit)
	}
}
