package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/connection"
	"github.com/hangar-ml/hangar/internal/store"
)

// Workspace connections (docs/data.md "Connections and data import"): the external sources a
// data import reads. Their credentials are sealed with the workspace key, never shown, and
// answered only to the supervisor of a live import run that reads the connection.

// Create creates or replaces a connection, its credentials sealed.
func (cs *Connections) Create(ctx context.Context, req api.CreateConnectionRequest) (*connection.Connection, error) {
	c, cred := req.Connection, req.Credentials
	if faults := connection.Check(c, cred); len(faults) > 0 {
		msgs := make([]string, len(faults))
		for i, f := range faults {
			msgs[i] = f.Error()
		}
		return nil, Invalidf("%s", strings.Join(msgs, "; "))
	}
	if cs.ws.Sealer == nil {
		return nil, errors.New("no workspace key to seal the connection's credentials")
	}
	b, err := json.Marshal(cred)
	if err != nil {
		return nil, err
	}
	sealed, err := cs.ws.Sealer.Encrypt(b)
	if err != nil {
		return nil, fmt.Errorf("seal the credentials of connection %s: %w", c.Name, err)
	}
	c.CredentialType = cred.Type
	c.CreatedAt = cs.ws.Now()
	if old, err := cs.ws.Store.Assets.Connection(ctx, c.Name); err == nil {
		c.CreatedAt = old.CreatedAt
	}
	if err := cs.ws.Store.Assets.PutConnection(ctx, store.StoredConnection{Connection: c, Sealed: sealed}); err != nil {
		return nil, err
	}
	cs.ws.Log.Info("connection stored", "connection", c.Name, "type", c.Type)
	return &c, nil
}

// List lists the connections (never their credentials' values).
func (cs *Connections) List(ctx context.Context) ([]connection.Connection, error) {
	list, err := cs.ws.Store.Assets.Connections(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]connection.Connection, len(list))
	for i, c := range list {
		out[i] = c.Connection
	}
	return out, nil
}

// Get returns one connection, as a NotFound error naming those there are when there is none.
func (cs *Connections) Get(ctx context.Context, name string) (*connection.Connection, error) {
	c, err := cs.ws.Store.Assets.Connection(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		return nil, NotFoundf("no connection named %s in this workspace%s", name, cs.known(ctx))
	}
	if err != nil {
		return nil, err
	}
	return &c.Connection, nil
}

// known says which connections there are, for a not-found message.
func (cs *Connections) known(ctx context.Context) string {
	list, err := cs.List(ctx)
	if err != nil || len(list) == 0 {
		return " (it has none: hangar connection create -f <file>)"
	}
	names := make([]string, len(list))
	for i, c := range list {
		names[i] = c.Name
	}
	return " (known: " + strings.Join(names, ", ") + ")"
}

// Delete removes a connection; one that a live import reads is kept (Conflict, naming the runs).
func (cs *Connections) Delete(ctx context.Context, name string) (*connection.Connection, error) {
	c, err := cs.Get(ctx, name)
	if err != nil {
		return nil, err
	}
	readers, err := cs.readers(ctx, name)
	if err != nil {
		return nil, err
	}
	if len(readers) > 0 {
		return nil, Conflictf("connection %s is read by the import job(s) %s, not ended yet; delete it once they end (or cancel them)", name, strings.Join(readers, ", "))
	}
	if err := cs.ws.Store.Assets.DeleteConnection(ctx, name); err != nil {
		return nil, mapStoreErr(err)
	}
	cs.ws.Log.Info("connection deleted", "connection", name)
	return c, nil
}

// readers are the active import runs that read a connection, sorted.
func (cs *Connections) readers(ctx context.Context, name string) ([]string, error) {
	active, err := cs.ws.Store.Runs.List(ctx, store.RunFilter{Active: true})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range active {
		if r.Spec.Import != nil && r.Spec.Import.Connection == name {
			out = append(out, r.ID)
		}
	}
	slices.Sort(out)
	return out, nil
}

// ForRun answers an import run's supervisor: the target and credentials of the connection its
// stored spec reads, only while the run is not final. The caller has checked that the run token
// is this run's.
func (cs *Connections) ForRun(ctx context.Context, runID string) (*api.ConnectionCredentials, error) {
	r, err := cs.ws.Store.Runs.Run(ctx, runID)
	if err != nil {
		return nil, mapStoreErr(err)
	}
	switch {
	case r.Status.Terminal():
		return nil, Conflictf("run %s is %s: its connection's credentials are no longer given out", runID, r.Status)
	case r.Spec.Import == nil:
		return nil, NotFoundf("run %s is not a data import: it reads no connection", runID)
	}
	name := r.Spec.Import.Connection
	c, err := cs.ws.Store.Assets.Connection(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		return nil, NotFoundf("connection %s was deleted from the workspace after the import was submitted", name)
	}
	if err != nil {
		return nil, err
	}
	if cs.ws.Sealer == nil {
		return nil, errors.New("no workspace key to unseal the connection's credentials")
	}
	b, err := cs.ws.Sealer.Decrypt(c.Sealed)
	if err != nil {
		return nil, fmt.Errorf("unseal the credentials of connection %s: %w", name, err)
	}
	out := &api.ConnectionCredentials{Name: c.Name, Type: c.Type, Target: c.Target}
	if err := json.Unmarshal(b, &out.Credentials); err != nil {
		return nil, fmt.Errorf("decode the credentials of connection %s: %w", name, err)
	}
	cs.ws.Log.Info("connection credentials given to an import run", "connection", name, "run", runID)
	return out, nil
}
