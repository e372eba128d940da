package binding

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/pattern"
)

// A job takes a workspace secret through an environment variable whose value holds
// ${{secrets.<name>}} (docs/secrets.md): the spec, and so the stored run, keeps the reference;
// the run's supervisor fetches the value with its run token and substitutes it.

// SecretPrefix starts the expression of a secret reference.
const SecretPrefix = "secrets."

var secretNameRE = pattern.New(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)

// CheckSecretName refuses a secret name that is not usable as an environment variable's name.
func CheckSecretName(name string) error {
	if !secretNameRE.MatchString(name) {
		return fmt.Errorf("invalid secret name %q: expected a letter or '_' then letters, digits or '_' (at most 128), as an environment variable's name", name)
	}
	return nil
}

// secretExprs calls fn with each ${{ }} expression of value, trimmed, and the text before it.
// An unterminated ${{ is an error.
func secretExprs(value string, fn func(before, expr string) error) (rest string, err error) {
	for {
		i := strings.Index(value, "${{")
		if i < 0 {
			return value, nil
		}
		end := strings.Index(value[i+3:], "}}")
		if end < 0 {
			return "", errors.New("unterminated ${{ (missing }})")
		}
		if err := fn(value[:i], strings.TrimSpace(value[i+3:i+3+end])); err != nil {
			return "", err
		}
		value = value[i+3+end+2:]
	}
}

// secretOf is the secret an expression names, or an error saying what is allowed.
func secretOf(expr string) (string, error) {
	name, ok := strings.CutPrefix(expr, SecretPrefix)
	if !ok {
		return "", fmt.Errorf("${{%s}} is not allowed in an environment variable; expected ${{secrets.<name>}}", expr)
	}
	if err := CheckSecretName(name); err != nil {
		return "", fmt.Errorf("${{%s}}: %w", expr, err)
	}
	return name, nil
}

// SecretsIn lists the secrets an environment variable's value refers to.
func SecretsIn(value string) ([]string, error) {
	var out []string
	_, err := secretExprs(value, func(_, expr string) error {
		name, err := secretOf(expr)
		out = append(out, name)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// SecretRef is one secret a job's environment variable refers to.
type SecretRef struct {
	Var, Name string
}

// SecretRefs lists the secrets a job's environment variables refer to, by variable then name.
// A value that does not parse, a name bash cannot see, or a secret in a variable whose value is
// code (CheckEnvironmentVariable) is an error naming its field path.
func SecretRefs(sp *job.Spec) ([]SecretRef, error) {
	var out []SecretRef
	for _, k := range slices.Sorted(maps.Keys(sp.EnvironmentVariables)) {
		if err := CheckEnvironmentVariable(k, sp.EnvironmentVariables[k]); err != nil { // envvars.go
			return nil, fmt.Errorf("environment_variables.%s: %w", k, err)
		}
		names, err := SecretsIn(sp.EnvironmentVariables[k])
		if err != nil {
			return nil, fmt.Errorf("environment_variables.%s: %w", k, err)
		}
		for _, n := range names {
			out = append(out, SecretRef{Var: k, Name: n})
		}
	}
	return out, nil
}

// SecretNames is the sorted set of names in refs.
func SecretNames(refs []SecretRef) []string {
	var out []string
	for _, r := range refs {
		out = append(out, r.Name)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// BindSecrets substitutes every ${{secrets.<name>}} of value with its value from values; a
// name missing from values is an error.
func BindSecrets(value string, values map[string]string) (string, error) {
	var b strings.Builder
	rest, err := secretExprs(value, func(before, expr string) error {
		name, err := secretOf(expr)
		if err != nil {
			return err
		}
		v, ok := values[name]
		if !ok {
			return fmt.Errorf("secret %s: no value", name)
		}
		b.WriteString(before)
		b.WriteString(v)
		return nil
	})
	if err != nil {
		return "", err
	}
	b.WriteString(rest)
	return b.String(), nil
}
