package binding

import (
	"fmt"

	"github.com/hangar-ml/hangar/internal/pattern"
)

// envVarName is what an environment variable's name must be for a shell to name it: a letter
// or _ then letters, digits or _ (POSIX). Other names were taken and then silently missing
// from the run's environment.
var envVarName = pattern.New(`^[A-Za-z_][A-Za-z0-9_]*$`)

// CheckEnvironmentVariable checks one entry of a job's environment_variables: its name, the
// ${{secrets.<name>}} references of its value, and that no secret goes into a variable whose
// value is code (StartupVar). The error does not name the field; callers add its path.
func CheckEnvironmentVariable(name, value string) error {
	if !envVarName.MatchString(name) {
		return fmt.Errorf("invalid environment variable name %s: expected a letter or _ then letters, digits or _, as a shell variable's name", Quote(name))
	}
	secrets, err := SecretsIn(value) // secretrefs.go
	if err != nil {
		return err
	}
	if why := StartupVar(name); why != "" && len(secrets) > 0 {
		return fmt.Errorf("${{%s%s}} would be put in %s, a variable whose value is code (%s), so no secret is safe there; give the secret to a variable of another name",
			SecretPrefix, secrets[0], name, why)
	}
	return nil
}
