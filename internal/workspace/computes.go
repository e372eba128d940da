package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/hangar-ml/hangar/internal/backend"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/store"
)

// Sealer encrypts and decrypts secrets at rest (secrets.Keyring).
type Sealer interface {
	Encrypt(plaintext []byte) (string, error)
	Decrypt(ciphertext string) ([]byte, error)
}

// Create verifies a target with its backend (attach) and stores it with its secrets sealed.
// With replace, an existing target of the same name and type is updated (not while it has active
// runs, unless only settings that do not affect them change — Hangar is conservative: it refuses).
// Nothing is stored when verification fails.
func (cp *Computes) Create(ctx context.Context, s compute.Spec, replace bool) (*compute.Target, error) {
	if s.Name == "" {
		return nil, Invalidf("name: required")
	}
	old, err := cp.ws.Store.Cluster.Compute(ctx, s.Name)
	switch {
	case err == nil && !replace:
		return nil, Conflictf("compute %s already exists (use hangar compute update to change it)", s.Name)
	case err == nil && old.Type != s.Type:
		return nil, Conflictf("compute %s is a %s target; it cannot become %s (delete it first)", s.Name, old.Type, s.Type)
	case errors.Is(err, store.ErrNotFound) && replace:
		return nil, NotFoundf("compute %s does not exist", s.Name)
	case err != nil && !errors.Is(err, store.ErrNotFound):
		return nil, err
	}
	if s.Type == compute.TypeServerless { // a pool, not a target runs are handed to (serverless.go)
		return cp.putServerlessPool(ctx, s, old)
	}
	b, ok := cp.ws.Backends[s.Type]
	if !ok {
		return nil, Invalidf("type: %s targets are not supported by this version of Hangar yet", s.Type)
	}
	if s.Instance != nil {
		instanceOwner(&s, old)
	}
	st := compute.Stored{Spec: s}
	if a, ok := b.(backend.Attacher); ok {
		node, err := a.Attach(ctx, &st.Spec)
		if err != nil {
			return nil, Invalidf("attach %s: %v", s.Name, err)
		}
		st.Node, st.AttachedAt = node, cp.ws.Now()
	}
	if err := cp.ws.Seal(&st.Spec); err != nil {
		return nil, err
	}
	t, err := cp.put(ctx, st, old)
	if err != nil {
		return nil, err
	}
	cp.ws.Runs.ForgetTarget(s.Name) // a new spec (address, credentials): what its old one met is moot
	cp.ws.Log.Info("compute stored", "name", s.Name, "type", s.Type)
	if s.Type == compute.TypeInstance {
		if err := cp.ws.Instances.Created(ctx, s); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// put stores a target (its spec sealed already), keeping the creation time of the one it
// replaces.
func (cp *Computes) put(ctx context.Context, st compute.Stored, old *compute.Target) (*compute.Target, error) {
	props, err := json.Marshal(st)
	if err != nil {
		return nil, err
	}
	t := compute.Target{Name: st.Spec.Name, Type: st.Spec.Type, Description: st.Spec.Description, Properties: props, CreatedAt: cp.ws.Now()}
	if old != nil {
		t.CreatedAt = old.CreatedAt
	}
	if err := cp.ws.Store.Cluster.PutCompute(ctx, t); err != nil {
		return nil, err
	}
	return &t, nil
}

// Delete removes a target; with active runs it refuses unless force, which cancels them.
func (cp *Computes) Delete(ctx context.Context, name string, force bool) error {
	if name == compute.LocalName {
		return Invalidf("compute local is built in and cannot be deleted")
	}
	t, err := cp.ws.Store.Cluster.Compute(ctx, name)
	if err != nil {
		return mapStoreErr(err)
	}
	if err := cp.ws.Instances.Deletable(ctx, t); err != nil {
		return err
	}
	if err := cp.deleteServerlessClusters(ctx, t, force); err != nil {
		return err
	}
	active, err := cp.ws.Store.Runs.List(ctx, store.RunFilter{Active: true, Compute: name})
	if err != nil {
		return err
	}
	if len(active) > 0 && !force {
		return Conflictf("compute %s has %d active runs (e.g. %s); cancel them or use --force", name, len(active), active[0].ID)
	}
	for _, r := range active {
		if _, err := cp.ws.Runs.Cancel(ctx, r.ID); err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Kind != Conflict {
				return fmt.Errorf("cancel %s: %w", r.ID, err)
			}
		}
	}
	if err := cp.ws.Store.Cluster.DeleteCompute(ctx, name); err != nil {
		return err
	}
	if t.Type == compute.TypeInstance {
		if err := cp.ws.Store.Instances.Delete(ctx, name); err != nil {
			return err
		}
	}
	cp.ws.Runs.ForgetTarget(name)
	cp.ws.Runs.Kick() // a Placer removes what the target had (a cluster's nodes) on its next pass: now
	return nil
}

func (w *Workspace) Seal(s *compute.Spec) error {
	for _, f := range s.SecretFields() {
		if *f == "" {
			continue
		}
		if w.Sealer == nil {
			return fmt.Errorf("no workspace key to seal secrets")
		}
		ct, err := w.Sealer.Encrypt([]byte(*f))
		if err != nil {
			return err
		}
		*f = ct
	}
	return nil
}

// instanceOwner sets who owns an instance: create_on_behalf_of's user, else who created it
// (the CLI sends its user), else "unknown"; an update keeps the owner it had.
func instanceOwner(s *compute.Spec, old *compute.Target) {
	if old != nil {
		if st, err := compute.Load(*old); err == nil && st.Spec.Instance != nil && st.Spec.Instance.Owner != "" {
			s.Instance.Owner = st.Spec.Instance.Owner
			return
		}
	}
	if u := s.Instance.CreateOnBehalfOf["user_object_id"]; u != "" {
		s.Instance.Owner = u
	}
	if s.Instance.Owner == "" {
		s.Instance.Owner = "unknown"
	}
}
