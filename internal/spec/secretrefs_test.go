package spec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/binding"
)

func TestSecretReferencesInJobSpec(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "job.yml")
	write := func(body string) {
		t.Helper()
		if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(`command: echo hi
environment_variables:
  HF_TOKEN: ${{secrets.hf_token}}
  AUTH: "Bearer ${{ secrets.API_KEY }} and ${{secrets.hf_token}}"
  PLAIN: "no reference"
`)
	sp, _, err := ParseJobFile(file, nil)
	if err != nil {
		t.Fatal(err)
	}
	refs, err := binding.SecretRefs(sp)
	if err != nil {
		t.Fatal(err)
	}
	want := []binding.SecretRef{{Var: "AUTH", Name: "API_KEY"}, {Var: "AUTH", Name: "hf_token"}, {Var: "HF_TOKEN", Name: "hf_token"}}
	if diff := cmp.Diff(want, refs); diff != "" {
		t.Fatalf("refs (-want +got):\n%s", diff)
	}
	if got := binding.SecretNames(refs); !cmp.Equal(got, []string{"API_KEY", "hf_token"}) {
		t.Fatalf("names = %q", got)
	}
	// The spec keeps the reference, not a value.
	if sp.EnvironmentVariables["HF_TOKEN"] != "${{secrets.hf_token}}" {
		t.Fatalf("stored value = %q", sp.EnvironmentVariables["HF_TOKEN"])
	}
	got, err := binding.BindSecrets(sp.EnvironmentVariables["AUTH"], map[string]string{"API_KEY": "k$1", "hf_token": "t"})
	if err != nil || got != "Bearer k$1 and t" {
		t.Fatalf("bind = %q, %v", got, err)
	}
	if _, err := binding.BindSecrets("${{secrets.other}}", map[string]string{}); err == nil {
		t.Fatal("binding a secret without a value succeeded")
	}
}

func TestBadSecretReferenceNamesFileAndField(t *testing.T) {
	tests := []struct {
		value, want string
	}{
		{"${{inputs.x}}", "environment_variables.TOKEN: ${{inputs.x}} is not allowed in an environment variable; expected ${{secrets.<name>}}"},
		{"${{secrets.bad-name}}", `environment_variables.TOKEN: ${{secrets.bad-name}}: invalid secret name "bad-name"`},
		{"x ${{secrets.a", "environment_variables.TOKEN: unterminated ${{"},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "job.yml")
			body := "command: echo hi\nenvironment_variables:\n  TOKEN: \"" + tt.value + "\"\n"
			if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			_, _, err := ParseJobFile(file, nil)
			if err == nil || !strings.Contains(err.Error(), "job.yml") || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v; want it to name job.yml and %q", err, tt.want)
			}
		})
	}
}
