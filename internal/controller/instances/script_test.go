package instances

import (
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/binding"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/store"
)

// A setup script's text reaches its run unbound: a ${{secrets.x}} in it names no secret (a
// compute operator, who sets scripts, reads no secret's value), and bash runs the text as written.
func TestSetupScriptTextIsNotBound(t *testing.T) {
	const text = "echo '${{secrets.hf_token}}' '${{inputs.x}}' \"$1\"\n"
	sp := scriptJob(&store.Instance{Name: "dev1"}, &compute.InstanceSpec{Owner: "olga"}, "startup_script",
		&compute.SetupScript{Content: text, Args: []string{"it's"}}, time.Unix(0, 0))
	refs, err := binding.SecretRefs(&sp)
	if err != nil || len(refs) != 0 {
		t.Fatalf("secret refs of a setup script's run: %v, %v; want none", refs, err)
	}
	if got, _ := base64.StdEncoding.DecodeString(sp.EnvironmentVariables["HANGAR_SETUP_SCRIPT"]); string(got) != text {
		t.Fatalf("HANGAR_SETUP_SCRIPT decodes to %q", got)
	}
	dir := t.TempDir()
	cmd := exec.Command("bash", "-c", sp.Command)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HANGAR_SETUP_SCRIPT=" + sp.EnvironmentVariables["HANGAR_SETUP_SCRIPT"]}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	if want := "${{secrets.hf_token}} ${{inputs.x}} it's\n"; string(out) != want {
		t.Errorf("the script printed %q, want %q", out, want)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "setup-script.sh")); err != nil || string(b) != text {
		t.Errorf("setup-script.sh: %q, %v", b, err)
	}
}
