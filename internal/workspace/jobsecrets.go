package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/binding"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/store"
)

// Workspace secrets for jobs (docs/secrets.md): sealed with the workspace key, named by jobs'
// environment variables (${{secrets.<name>}}), answered only to a live run whose stored spec
// names them.

// MaxSecretBytes bounds one secret's value (a token, a private key or a small credentials file).
const MaxSecretBytes = 64 << 10

// Rotator is a Sealer whose key can be replaced (secrets.Box): Encrypt uses the rotation's key
// from BeginRotation on, Decrypt opens values under either key until CommitRotation.
type Rotator interface {
	Sealer
	// Current reports whether ciphertext is sealed under the key Encrypt uses now.
	Current(ciphertext string) bool
	// Rotating reports whether a rotation was begun and not committed (a crash interrupted it).
	Rotating() bool
	BeginRotation() error
	CommitRotation() error
	// KeyID names the key Encrypt uses now.
	KeyID() string
}

// Set stores a secret's value sealed, creating the secret or replacing its value; a
// non-nil access replaces who may use it at once (nil keeps it; a new secret is open).
func (ss *Secrets) Set(ctx context.Context, name, value string, access *api.SecretAccess) (created bool, err error) {
	if err := binding.CheckSecretName(name); err != nil {
		return false, Invalidf("name: %v", err)
	}
	var stored *store.SecretAccess
	if access != nil {
		a, err := ss.checkAccessInput(ctx, *access)
		if err != nil {
			return false, err
		}
		stored = &a
	}
	switch {
	case value == "":
		return false, Invalidf("value: empty (a secret needs a value; delete it with hangar secret delete %s)", name)
	case len(value) > MaxSecretBytes:
		return false, Invalidf("value: %d bytes, more than the %d a secret may hold", len(value), MaxSecretBytes)
	case ss.ws.Sealer == nil:
		return false, errors.New("no workspace key to seal secrets")
	}
	sealed, err := ss.ws.Sealer.Encrypt([]byte(value))
	if err != nil {
		return false, fmt.Errorf("seal secret %s: %w", name, err)
	}
	if created, err = ss.ws.Store.Assets.PutJobSecret(ctx, name, sealed, stored, ss.ws.Now()); err != nil {
		return false, err
	}
	ss.ws.Log.Info("secret stored", "name", name, "created", created)
	return created, nil
}

// SetAccess replaces who may use a secret (its value stays). Runs already submitted are
// checked again when they fetch the values.
func (ss *Secrets) SetAccess(ctx context.Context, name string, access api.SecretAccess) (*api.SecretInfo, error) {
	if err := binding.CheckSecretName(name); err != nil {
		return nil, Invalidf("name: %v", err)
	}
	a, err := ss.checkAccessInput(ctx, access)
	if err != nil {
		return nil, err
	}
	if err := ss.ws.Store.Assets.SetJobSecretAccess(ctx, name, a); err != nil {
		return nil, mapStoreErr(err)
	}
	ss.ws.Log.Info("secret access set", "name", name, "access", accessOf(a).String())
	list, err := ss.List(ctx)
	if err != nil {
		return nil, err
	}
	for _, s := range list {
		if s.Name == name {
			return &s, nil
		}
	}
	return nil, NotFoundf("no secret named %q in this workspace", name)
}

// List lists the secrets with their use (never their values): the active jobs naming each,
// and the run that fetched it last.
func (ss *Secrets) List(ctx context.Context) ([]api.SecretInfo, error) {
	list, err := ss.ws.Store.Assets.JobSecrets(ctx)
	if err != nil {
		return nil, err
	}
	users, err := ss.users(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]api.SecretInfo, 0, len(list))
	for _, s := range list {
		out = append(out, api.SecretInfo{Name: s.Name, Access: accessOf(s.Access), CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt,
			UsedBy: append([]string{}, users[s.Name]...), LastUsedBy: s.LastUsedRun, LastUsedAt: s.LastUsedAt})
	}
	return out, nil
}

// users maps each secret name to the active jobs whose spec names it, sorted.
func (ss *Secrets) users(ctx context.Context) (map[string][]string, error) {
	active, err := ss.ws.Store.Runs.List(ctx, store.RunFilter{Active: true})
	if err != nil {
		return nil, err
	}
	users := map[string][]string{}
	for _, r := range active {
		refs, err := binding.SecretRefs(&r.Spec)
		if err != nil {
			continue // refused at create; a stored spec that no longer parses names nothing
		}
		for _, n := range binding.SecretNames(refs) {
			users[n] = append(users[n], r.ID)
		}
	}
	for _, u := range users {
		sort.Strings(u)
	}
	return users, nil
}

// Delete removes a secret. It returns the active jobs that name it: those that have not
// fetched it yet will fail in Preparing, saying the secret is gone.
func (ss *Secrets) Delete(ctx context.Context, name string) (usedBy []string, err error) {
	if err := binding.CheckSecretName(name); err != nil {
		return nil, Invalidf("name: %v", err)
	}
	if err := ss.ws.Store.Assets.DeleteJobSecret(ctx, name); err != nil {
		return nil, mapStoreErr(err)
	}
	users, err := ss.users(ctx)
	if err != nil {
		return nil, err
	}
	ss.ws.Log.Info("secret deleted", "name", name)
	return users[name], nil
}

// CheckSecretRefs refuses the secrets sp names that user by may not use, or that the workspace
// does not have.
func (w *Workspace) CheckSecretRefs(ctx context.Context, by string, sp *job.Spec) error {
	return w.checkSecretRefs(ctx, by, sp, nil)
}

// checkSecretRefs refuses a job whose environment variables, or those of what check stands for
// (a sweep's sample trial, when not nil), name a secret the workspace does not have, or one its
// submitter by may not use (secretaccess.go): at submit time, rather than in Preparing.
func (w *Workspace) checkSecretRefs(ctx context.Context, by string, sp, check *job.Spec) error {
	refs, err := binding.SecretRefs(sp)
	if err != nil {
		return Invalidf("%v", err)
	}
	if check != nil {
		more, err := binding.SecretRefs(check)
		if err != nil {
			return Invalidf("trial: %v", err)
		}
		refs = append(refs, more...)
	}
	if len(refs) == 0 {
		return nil
	}
	have, err := w.secretSet(ctx)
	if err != nil {
		return err
	}
	for _, r := range refs {
		if _, ok := have[r.Name]; !ok {
			return Invalidf("environment_variables.%s: no secret named %q in this workspace (known: %s; set it with hangar secret set %s)",
				r.Var, r.Name, orNone(slices.Sorted(maps.Keys(have))), r.Name)
		}
	}
	why, err := w.checkSecretAccess(ctx, by, refs, have)
	if err != nil {
		return err
	}
	if why != "" {
		return Invalidf("%s", why)
	}
	return nil
}

func (w *Workspace) secretSet(ctx context.Context) (map[string]store.JobSecret, error) {
	list, err := w.Store.Assets.JobSecrets(ctx)
	if err != nil {
		return nil, err
	}
	m := make(map[string]store.JobSecret, len(list))
	for _, s := range list {
		m[s.Name] = s
	}
	return m, nil
}

func orNone(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(xs, ", ")
}

// ForRun answers a run's supervisor: the values of the secrets its stored spec names, only
// while the run is not final, and only those its submitter may use now (access is checked again
// here: it may have been removed while the run waited). The caller has checked that the run
// token is this run's.
func (ss *Secrets) ForRun(ctx context.Context, runID string) (map[string]string, error) {
	r, err := ss.ws.Store.Runs.Run(ctx, runID)
	if err != nil {
		return nil, mapStoreErr(err)
	}
	if r.Status.Terminal() {
		return nil, Conflictf("run %s is %s: its secrets are no longer given out", runID, r.Status)
	}
	refs, err := binding.SecretRefs(&r.Spec)
	if err != nil {
		return nil, Invalidf("%v", err)
	}
	out := map[string]string{}
	if len(refs) == 0 {
		return out, nil
	}
	have, err := ss.ws.secretSet(ctx)
	if err != nil {
		return nil, err
	}
	if why, err := ss.ws.checkSecretAccess(ctx, Submitter(&r.Spec), refs, have); err != nil || why != "" {
		if err == nil {
			err = Conflictf("%s", why)
			ss.ws.Log.Warn("secret refused to a run", "run", runID, "why", why)
		}
		return nil, err
	}
	for _, ref := range refs {
		if _, done := out[ref.Name]; done {
			continue
		}
		s, ok := have[ref.Name]
		if !ok {
			return nil, NotFoundf("environment_variables.%s: secret %s was deleted from the workspace after the job was submitted", ref.Var, ref.Name)
		}
		if ss.ws.Sealer == nil {
			return nil, errors.New("no workspace key to unseal secrets")
		}
		v, err := ss.ws.Sealer.Decrypt(s.Sealed)
		if err != nil {
			return nil, fmt.Errorf("unseal secret %s: %w", ref.Name, err)
		}
		out[ref.Name] = string(v)
	}
	if err := ss.ws.Store.Assets.MarkJobSecretsUsed(ctx, slices.Sorted(maps.Keys(out)), runID, ss.ws.Now()); err != nil {
		ss.ws.Log.Warn("record the use of secrets", "run", runID, "err", err)
	}
	return out, nil
}

// RotateKey reseals every sealed value of the workspace (job secrets, endpoints' keys, compute
// targets' passwords and private keys) under a new key, then drops the old one (see
// finishRotation for what a crash in the middle leaves).
func (ss *Secrets) RotateKey(ctx context.Context) (*api.RotateKeyReply, error) {
	r, ok := ss.ws.Sealer.(Rotator)
	if !ok {
		return nil, Invalidf("this workspace's secret key cannot be rotated (no key file)")
	}
	ss.ws.rotating.Lock()
	defer ss.ws.rotating.Unlock()
	if err := r.BeginRotation(); err != nil {
		return nil, err
	}
	n, err := ss.finishRotation(ctx, r)
	if err != nil {
		return nil, err
	}
	return &api.RotateKeyReply{KeyID: r.KeyID(), Resealed: n}, nil
}

// FinishKeyRotation completes a rotation that a crash interrupted; the server calls it at start,
// before it serves.
func (ss *Secrets) FinishKeyRotation(ctx context.Context) error {
	r, ok := ss.ws.Sealer.(Rotator)
	if !ok || !r.Rotating() {
		return nil
	}
	ss.ws.rotating.Lock()
	defer ss.ws.rotating.Unlock()
	n, err := ss.finishRotation(ctx, r)
	if err != nil {
		return fmt.Errorf("finish the key rotation begun before: %w", err)
	}
	ss.ws.Log.Info("finished the key rotation an earlier run of the server began", "resealed", n, "key", r.KeyID())
	return nil
}

// maxResealPasses bounds the passes of finishRotation.
const maxResealPasses = 5

// finishRotation reseals until a pass finds nothing under the old key, then commits the key.
// Each pass is one transaction, all or nothing. The first reseals everything; a later one
// catches a value sealed under the old key just before the rotation began and written after the
// pass (a compute target attached meanwhile). Until the commit both key files are on disk and
// the box opens values under either, so a crash at any point loses nothing: the next start
// finds the rotation's key file and finishes the rotation (FinishKeyRotation).
func (ss *Secrets) finishRotation(ctx context.Context, r Rotator) (int, error) {
	total := 0
	for pass := 0; ; pass++ {
		if pass == maxResealPasses {
			return total, errors.New("values sealed under the old key keep arriving; try again (both keys are kept until it succeeds)")
		}
		n, err := ss.ws.Store.Assets.Reseal(ctx, Resealer(r))
		if err != nil {
			return total, fmt.Errorf("reseal: %w", err)
		}
		total += n
		if n == 0 {
			break
		}
	}
	if err := r.CommitRotation(); err != nil {
		return total, err
	}
	ss.ws.Log.Info("secret key rotated", "key", r.KeyID(), "resealed", total)
	return total, nil
}

// Resealer reseals what is not under r's current key.
func Resealer(r Rotator) store.Resealer {
	value := func(sealed string) (string, bool, error) {
		if r.Current(sealed) {
			return sealed, false, nil
		}
		b, err := r.Decrypt(sealed)
		if err != nil {
			return "", false, err
		}
		out, err := r.Encrypt(b)
		return out, err == nil, err
	}
	return store.Resealer{
		Value: value,
		Compute: func(t compute.Target) ([]byte, bool, error) {
			st, err := compute.Load(t)
			if err != nil {
				return nil, false, err
			}
			changed := false
			for _, f := range st.Spec.SecretFields() {
				if *f == "" {
					continue
				}
				out, ch, err := value(*f)
				if err != nil {
					return nil, false, err
				}
				*f, changed = out, changed || ch
			}
			if !changed {
				return t.Properties, false, nil
			}
			b, err := json.Marshal(st)
			return b, err == nil, err
		},
	}
}
