package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/api"
)

// job show prints the command as it ran (inputs and outputs bound to the node's paths), the
// inputs, and job list -o json, job metrics and job compare read the run's metrics.
func TestJobShowPrintsTheBoundCommand(t *testing.T) {
	w := newWS(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"data/a.txt": "a",
		"job.yml": `command: >-
  echo lr=${{inputs.lr}} data=${{inputs.data}} out=${{outputs.model}} &&
  echo "{\"name\": \"loss\", \"value\": 0.5, \"step\": 1}" >> $HANGAR_METRICS_FILE &&
  echo "{\"name\": \"loss\", \"value\": 0.25, \"step\": 2}" >> $HANGAR_METRICS_FILE
inputs:
  lr: 0.01
  data: {type: uri_folder, path: ./data}
outputs:
  model: {type: uri_folder}
`,
	})
	name := w.create(filepath.Join(dir, "job.yml"))
	r := w.run("job", "stream", name) // the name as an argument
	if r.code != 0 {
		t.Fatalf("stream exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
	ran := strings.TrimSpace(strings.SplitN(r.stdout, "\n", 2)[0]) // lr=0.01 data=/... out=/...
	if !strings.HasPrefix(ran, "lr=0.01 data=/") || !strings.Contains(ran, " out=/") {
		t.Fatalf("first log line %q, want the bound values", ran)
	}
	show := w.ok("job", "show", name).stdout
	var command string
	for _, l := range strings.Split(show, "\n") {
		if v, ok := strings.CutPrefix(l, "Command:"); ok {
			command = strings.TrimSpace(v)
		}
	}
	if !strings.HasPrefix(command, "echo "+ran+" && echo") {
		t.Errorf("job show Command: %q; want what ran: echo %s && ...\n%s", command, ran, show)
	}
	for _, want := range []string{"Spec command: echo lr=${{inputs.lr}}", "Inputs:\n", "  lr = 0.01 (number)\n", "  data = uri_folder " + filepath.Join(dir, "data")} {
		if !strings.Contains(show, want) {
			t.Errorf("job show lacks %q:\n%s", want, show)
		}
	}

	var list []api.RunDetail
	if err := json.Unmarshal([]byte(w.ok("job", "list", "--status", "Completed", "-o", "json").stdout), &list); err != nil || len(list) != 1 {
		t.Fatalf("job list: %v %v", list, err)
	}
	if got := list[0].Metrics["loss"]; got != 0.25 {
		t.Errorf("job list -o json metrics = %v, want loss 0.25", list[0].Metrics)
	}
	if out := w.ok("job", "metrics", name, "-o", "json", "--query", "[].value").stdout; out != "[\n  0.5,\n  0.25\n]\n" {
		t.Errorf("job metrics history = %q", out)
	}
	if out := w.ok("job", "list", "--status", "Failed").stdout; strings.Contains(out, name) {
		t.Errorf("job list --status Failed shows the completed job:\n%s", out)
	}
	w.ok("job", "archive", name)
	if out := w.ok("job", "list", "--query", "[].name").stdout; out != "" {
		t.Errorf("job list after archive = %q, want nothing", out)
	}
	if r := w.run("job", "delete", name); r.code != 2 || !strings.Contains(r.stderr, "pass --yes") {
		t.Errorf("job delete without a terminal or --yes: exit %d, %q", r.code, r.stderr)
	}
	w.ok("job", "delete", name, "--yes")
	if r := w.run("job", "show", name); r.code != 1 || !strings.Contains(r.stderr, "not found") {
		t.Errorf("show after delete: exit %d, %q", r.code, r.stderr)
	}
}
