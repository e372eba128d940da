package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
)

// Hostile specs, through the CLI and straight to the API: values that bash would run, malformed
// and explosive YAML, names that are paths. Every one is refused with a reason, no run is created,
// no value runs, and the server goes on serving.
func TestFaultHostileSpecs(t *testing.T) {
	w := newWS(t)
	dir := t.TempDir()
	canary := filepath.Join(dir, "CANARY")
	value := "a[$(touch " + canary + ")]"
	quoted := strings.ReplaceAll(value, "'", "''")
	var bomb strings.Builder
	bomb.WriteString("a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n")
	for i, prev := 'b', 'a'; i <= 'i'; i, prev = i+1, i {
		fmt.Fprintf(&bomb, "%c: &%c [*%c,*%c,*%c,*%c,*%c,*%c,*%c,*%c,*%c]\n", i, i, prev, prev, prev, prev, prev, prev, prev, prev, prev)
	}
	bomb.WriteString("command: echo ${{inputs.x}}\ninputs:\n  x: *i\n")
	specs := map[string]string{
		"arithmetic $(( ))": "command: echo $(( ${{inputs.n}} + 1 ))\ninputs:\n  n: '" + quoted + "'\n",
		"arithmetic (( ))":  "command: (( ${{inputs.n}} > 0 )) && echo big\ninputs:\n  n: '" + quoted + "'\n",
		"let":               "command: let x=${{inputs.n}}; echo $x\ninputs:\n  n: '" + quoted + "'\n",
		"declare -i":        "command: declare -i x=${{inputs.n}}; echo $x\ninputs:\n  n: '" + quoted + "'\n",
		"[[ -eq ]]":         "command: a=1; [[ $a -eq ${{inputs.n}} ]] && echo eq\ninputs:\n  n: '" + quoted + "'\n",
		"eval":              "command: eval ${{inputs.n}}\ninputs:\n  n: touch " + canary + "\n",
		"integer input":     "command: echo ${{inputs.n}}\ninputs:\n  n: {type: integer, default: '" + quoted + "'}\n",
		"alias bomb":        bomb.String(),
		"deep nesting":      "command: echo\ntags: " + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + "\n",
		"binary":            "\x00\x01\x02\xff\xfe command: echo\n",
		"name with a path":  "command: echo\nname: ../../etc/passwd\n",
		"name with a shell": "command: echo\nname: 'x; touch " + canary + "'\n",
		"tab-indented":      "command: echo\ninputs:\n\tx: 1\n",
	}
	refused := 0
	for name, spec := range specs {
		file := filepath.Join(dir, "job.yml")
		if err := os.WriteFile(file, []byte(spec), 0o644); err != nil {
			t.Fatal(err)
		}
		if r := w.run("job", "create", "-f", file); r.code == 0 || !strings.Contains(r.stderr, "job.yml") {
			t.Errorf("%s: exit %d, stderr %q; want a refusal naming the file", name, r.code, r.stderr)
		} else {
			refused++
		}
	}
	// --set, as in the issue.
	writeFiles(t, dir, map[string]string{"set.yml": "command: echo $(( ${{inputs.n}} + 1 ))\ninputs:\n  n: '1'\n"})
	if r := w.run("job", "create", "-f", filepath.Join(dir, "set.yml"), "--set", "inputs.n="+value); r.code == 0 {
		t.Errorf("--set inputs.n=%s: exit 0", value)
	} else {
		refused++
	}

	// Straight to the API, past the CLI's checks.
	apiSpecs := map[string]job.Spec{
		"arithmetic": {Command: "echo $(( ${{inputs.n}} + 1 ))", Inputs: map[string]job.Input{"n": {Type: job.InputString, Value: value}}},
		"eval":       {Command: "eval ${{inputs.n}}", Inputs: map[string]job.Input{"n": {Type: job.InputString, Value: "touch " + canary}}},
		"path name":  {Command: "echo", Name: "../../x"},
		"job type":   {Command: "echo", Type: "pipeline; rm -rf /"},
	}
	for name, sp := range apiSpecs {
		body, _ := json.Marshal(api.CreateJobRequest{Spec: sp})
		req, _ := http.NewRequestWithContext(context.Background(), "POST", w.client().BaseURL()+"/api/jobs", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+w.adminToken())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("API %s: %d, want 400", name, resp.StatusCode)
		} else {
			refused++
		}
	}

	var list []api.RunDetail
	if err := json.Unmarshal([]byte(w.ok("job", "list", "-o", "json").stdout), &list); err != nil || len(list) != 0 {
		t.Errorf("runs created: %d (%v)", len(list), err)
	}
	if _, err := os.Stat(canary); err == nil {
		t.Error("a value ran: the canary file exists")
	}
	log := readFile(t, filepath.Join(w.home, "test-server.log"))
	if strings.Contains(log, "panic") {
		t.Errorf("the server panicked:\n%s", log)
	}
	total := len(specs) + 1 + len(apiSpecs)
	reportFault(t, faultRow{Target: "server", Injected: fmt.Sprintf("%d hostile specs (values bash would run, an alias bomb, 20,000-deep nesting, binary, names that are paths; CLI and API)", total),
		Final: fmt.Sprintf("%d of %d refused with the file and field (400 from the API); 0 runs created; no value ran; 0 panics", refused, total)})
}
