package compute

import (
	"context"
	"errors"
	"fmt"
)

// Unsealer decrypts secret values sealed at rest (secrets.Keyring).
type Unsealer interface {
	Decrypt(ciphertext string) ([]byte, error)
}

// Resolver finds a target by name with its secrets unsealed: what backends that connect to a
// target (SSH hosts, a Slurm login host) need. It is built from the store and the workspace key
// before the backends and the controller, so neither refers to the other for it.
type Resolver struct {
	// Lookup returns a stored target by name.
	Lookup func(ctx context.Context, name string) (*Target, error)
	// Secrets unseals the target's secret fields; nil refuses targets that have any.
	Secrets Unsealer
}

// Resolve returns the named target's spec with its secrets unsealed.
func (r Resolver) Resolve(ctx context.Context, name string) (*Stored, error) {
	if r.Lookup == nil {
		return nil, errors.New("no compute targets to resolve from")
	}
	t, err := r.Lookup(ctx, name)
	if err != nil {
		return nil, err
	}
	return Unseal(*t, r.Secrets)
}

// Unseal decodes a target and decrypts its secret fields (passwords, private keys).
func Unseal(t Target, u Unsealer) (*Stored, error) {
	st, err := Load(t)
	if err != nil {
		return nil, err
	}
	for _, f := range st.Spec.SecretFields() {
		if *f == "" {
			continue
		}
		if u == nil {
			return nil, fmt.Errorf("compute %s: no workspace key to unseal its secrets", t.Name)
		}
		b, err := u.Decrypt(*f)
		if err != nil {
			return nil, fmt.Errorf("compute %s: unseal secret: %w", t.Name, err)
		}
		*f = string(b)
	}
	return st, nil
}
