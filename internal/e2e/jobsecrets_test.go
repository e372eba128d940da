package e2e

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/remote/sshtest"
)

// secretJobScript prints the secret (stdout, stderr, and in two pieces with a pause between, so
// that the supervisor writes out the first piece before the rest arrives), writes it to an output,
// and exits 0 only when HF_TOKEN holds the value whose SHA-256 is given.
func secretJobScript(sum string) string {
	return `echo "token is $HF_TOKEN"
echo "on stderr $HF_TOKEN" >&2
printf 'split %s' "${HF_TOKEN:0:8}"; sleep 1.5; printf '%s end\n' "${HF_TOKEN:8}"
printf '%s' "$HF_TOKEN" > outputs/token.txt
got=$(printf '%s' "$HF_TOKEN" | sha256sum | cut -d' ' -f1)
if [ "$got" != "` + sum + `" ]; then echo "the job got another value"; exit 3; fi
echo compared-ok
`
}

// A secret set through the CLI reaches the job (it compares it), and its value appears nowhere
// a user or operator can see: CLI output (tables and JSON), the run's log, its downloaded logs,
// the server's log, any file of the workspace home (the database included), except the output
// file the job wrote it to on purpose. After the key is rotated, jobs still get it, on this
// machine and on an SSH target whose private key was resealed.
func TestJobSecretsNeverShow(t *testing.T) {
	srv := sshtest.Start(t, sshtest.Options{})
	w := newWS(t)
	value := "hfsec_" + rand.Text()
	sum := sha256.Sum256([]byte(value))
	dir := t.TempDir()
	work := filepath.Join(t.TempDir(), "vm-work")
	t.Cleanup(func() { stopSupervisors(filepath.Join(work, "runs")) })
	writeFiles(t, dir, map[string]string{
		"src/run.sh": secretJobScript(hex.EncodeToString(sum[:])),
		"job.yml":    "command: bash run.sh\ncode: src\nenvironment_variables:\n  HF_TOKEN: ${{secrets.hf_token}}\n",
		"vmjob.yml":  "command: bash run.sh\ncode: src\ncompute: vm1\nenvironment_variables:\n  HF_TOKEN: ${{secrets.hf_token}}\n",
		"bad.yml":    "command: env\nenvironment_variables:\n  HF_TOKEN: ${{secrets.nope}}\n",
		"vm.yml":     vmYAML("vm1", srv, srv.KeyFile, work),
		"value.txt":  value,
	})
	var seen strings.Builder // every CLI output of the test
	cli := func(args ...string) result {
		t.Helper()
		r := w.ok(args...)
		seen.WriteString(r.stdout + r.stderr)
		return r
	}

	r := w.runStdin(value+"\n", "secret", "set", "hf_token", "-o", "json")
	seen.WriteString(r.stdout + r.stderr)
	if r.code != 0 || !strings.Contains(r.stderr, "Created secret hf_token") {
		t.Fatalf("secret set: exit %d %s %s", r.code, r.stdout, r.stderr)
	}
	cli("secret", "set", "from_file", "--from-file", filepath.Join(dir, "value.txt"))
	if r := w.run("job", "create", "-f", filepath.Join(dir, "bad.yml")); r.code == 0 ||
		!strings.Contains(r.stderr, "bad.yml: environment_variables.HF_TOKEN: no secret named \"nope\"") {
		t.Fatalf("job naming an unknown secret: exit %d %s", r.code, r.stderr)
	}
	cli("compute", "attach", "-f", filepath.Join(dir, "vm.yml"))

	r = cli("job", "create", "-f", filepath.Join(dir, "job.yml"), "--name", "sj", "--stream")
	for _, want := range []string{"token is ***", "on stderr ***", "*** end", "compared-ok"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("streamed log lacks %q:\n%s", want, r.stdout)
		}
	}
	if d := w.show("sj"); d.Status != job.Completed {
		t.Fatalf("job sj is %s (%s): it did not get the value", d.Status, d.StatusReason)
	}
	cli("job", "show", "-n", "sj")
	cli("job", "show", "-n", "sj", "-o", "json")
	cli("job", "logs", "-n", "sj")
	cli("job", "list", "-o", "json")
	list := cli("secret", "list", "-o", "json")
	var infos []api.SecretInfo
	if err := json.Unmarshal([]byte(list.stdout), &infos); err != nil || len(infos) != 2 || infos[1].LastUsedBy != "sj" {
		t.Fatalf("secret list: %v %s", err, list.stdout)
	}
	cli("secret", "list")
	download := t.TempDir()
	cli("job", "download", "-n", "sj", "--all", "--download-path", download)
	if got := readFile(t, filepath.Join(download, "sj", "artifacts", "outputs", "token.txt")); got != value {
		t.Fatalf("the job's own output holds %q", got)
	}
	if !strings.Contains(readFile(t, filepath.Join(download, "sj", "artifacts", "user_logs", "std_log.txt")), "token is ***") {
		t.Error("the downloaded log is not redacted")
	}

	// Rotate: every sealed value under a new key; the job and the SSH target still work.
	before := readFile(t, filepath.Join(w.home, "secret.key"))
	rot := cli("secret", "rotate-key", "--yes", "-o", "json")
	var reply api.RotateKeyReply
	if err := json.Unmarshal([]byte(rot.stdout), &reply); err != nil || reply.Resealed < 3 { // 2 secrets + vm1
		t.Fatalf("rotate-key: %v %s", err, rot.stdout)
	}
	if readFile(t, filepath.Join(w.home, "secret.key")) == before {
		t.Fatal("the key file did not change")
	}
	for _, f := range []string{"job.yml", "vmjob.yml"} {
		r := cli("job", "create", "-f", filepath.Join(dir, f), "--stream")
		if !strings.Contains(r.stdout, "compared-ok") || strings.Contains(r.stdout, value) {
			t.Fatalf("%s after the rotation:\n%s\n%s", f, r.stdout, r.stderr)
		}
	}
	// A restarted server reads the rotated key and the resealed values.
	w.killServer()
	w.startServer()
	r = cli("job", "create", "-f", filepath.Join(dir, "vmjob.yml"), "--stream")
	if !strings.Contains(r.stdout, "compared-ok") {
		t.Fatalf("after a restart:\n%s\n%s", r.stdout, r.stderr)
	}

	if strings.Contains(seen.String(), value) {
		t.Fatalf("a CLI output holds the value:\n%s", seen.String())
	}
	checked := grepTree(t, w.home, value)
	grepTree(t, download, value)
	grepTree(t, work, value)
	if onPostgres(t) {
		checked["workspace.db"] = pgDumpLacks(t, w.dsn(), value)
	}
	for _, must := range []string{"workspace.db", "test-server.log"} {
		if !checked[must] {
			t.Errorf("%s was not checked", must)
		}
	}
}

// pgDumpLacks fails the test when a dump of the PostgreSQL database at dsn holds value (the
// database's counterpart of workspace.db in grepTree), and says whether it could read the dump.
func pgDumpLacks(t *testing.T, dsn, value string) bool {
	t.Helper()
	out, err := exec.Command("pg_dump", "--data-only", "--dbname", dsn).Output()
	if err != nil {
		t.Errorf("pg_dump of the workspace's database: %v", err)
		return false
	}
	if bytes.Contains(out, []byte(value)) {
		t.Errorf("the workspace's PostgreSQL database holds the secret's value")
	}
	return true
}

// grepTree fails the test for every file under root holding value, except the job's output
// file (outputs/token.txt) and its copies in blob stores (whose content is exactly the value).
// It returns the base names of the files it read.
func grepTree(t *testing.T, root, value string) map[string]bool {
	t.Helper()
	checked := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) || os.IsPermission(err) {
				return nil
			}
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil // a file going away under the walk (a run's temp file)
		}
		checked[d.Name()] = true
		if !bytes.Contains(b, []byte(value)) {
			return nil
		}
		if string(b) == value || strings.HasSuffix(path, filepath.Join("outputs", "token.txt")) {
			return nil // the job's output, written on purpose
		}
		t.Errorf("%s holds the secret's value", path)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return checked
}
