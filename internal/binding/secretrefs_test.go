package binding

import (
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/job"
)

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
