package spec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/job"
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
	refs, err := SecretRefs(sp)
	if err != nil {
		t.Fatal(err)
	}
	want := []SecretRef{{"AUTH", "API_KEY"}, {"AUTH", "hf_token"}, {"HF_TOKEN", "hf_token"}}
	if diff := cmp.Diff(want, refs); diff != "" {
		t.Fatalf("refs (-want +got):\n%s", diff)
	}
	if got := SecretNames(refs); !cmp.Equal(got, []string{"API_KEY", "hf_token"}) {
		t.Fatalf("names = %q", got)
	}
	// The spec keeps the reference, not a value.
	if sp.EnvironmentVariables["HF_TOKEN"] != "${{secrets.hf_token}}" {
		t.Fatalf("stored value = %q", sp.EnvironmentVariables["HF_TOKEN"])
	}
	got, err := BindSecrets(sp.EnvironmentVariables["AUTH"], map[string]string{"API_KEY": "k$1", "hf_token": "t"})
	if err != nil || got != "Bearer k$1 and t" {
		t.Fatalf("bind = %q, %v", got, err)
	}
	if _, err := BindSecrets("${{secrets.other}}", map[string]string{}); err == nil {
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

func TestCheckSecretName(t *testing.T) {
	for name, ok := range map[string]bool{"hf_token": true, "_X1": true, "A": true, "1abc": false, "a-b": false,
		"": false, "a b": false, strings.Repeat("a", 128): true, strings.Repeat("a", 129): false, "é": false} {
		if err := CheckSecretName(name); (err == nil) != ok {
			t.Errorf("CheckSecretName(%q) = %v", name, err)
		}
	}
}

// A spec sent straight to the API (no YAML decoding) is checked the same way: SecretRefs, which the
// server and the supervisor call, refuses a name a shell cannot read and a secret in a variable
// whose value is code, naming the field.
func TestSecretRefsChecksEveryVariable(t *testing.T) {
	tests := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"1BAD": "x"}, `environment_variables.1BAD: invalid environment variable name "1BAD": expected a letter or _ then letters, digits or _, as a shell variable's name`},
		{map[string]string{"A-B": "x"}, `environment_variables.A-B: invalid environment variable name "A-B"`},
		{map[string]string{"BASH_ENV": "${{secrets.k}}"}, "environment_variables.BASH_ENV: ${{secrets.k}} would be put in BASH_ENV, a variable whose value is code"},
		{map[string]string{"LD_PRELOAD": "/lib/${{secrets.k}}.so"}, "environment_variables.LD_PRELOAD: ${{secrets.k}} would be put in LD_PRELOAD"},
		{map[string]string{"BASH_FUNC_f%%": "x"}, `environment_variables.BASH_FUNC_f%%: invalid environment variable name`},
	}
	for _, tt := range tests {
		_, err := SecretRefs(&job.Spec{Command: "echo", EnvironmentVariables: tt.env})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("SecretRefs(%v) = %v, want %q", tt.env, err, tt.want)
		}
	}
	if refs, err := SecretRefs(&job.Spec{EnvironmentVariables: map[string]string{"BASH_ENV": "/etc/profile", "_OK1": "${{secrets.k}}"}}); err != nil || len(refs) != 1 {
		t.Errorf("a literal BASH_ENV and a secret elsewhere: %v, %v", refs, err)
	}
}
