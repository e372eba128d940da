package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/hangar-ml/hangar/internal/datastore"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/store"
)

// CredentialsForRun answers a run's supervisor: the credentials of each object-store datastore
// its stored spec's inputs and outputs name (Store.Datastore), unsealed, only while the run is
// not final. A datastore without credentials is answered with the zero value (the node's
// ambient identity); one deleted since the job was created is an error naming it. The caller
// has checked that the run token is this run's. The fetch is recorded on each datastore (last
// used by, at), as job secrets record theirs.
func (dss *Datastores) CredentialsForRun(ctx context.Context, runID string) (map[string]datastore.Credentials, error) {
	r, err := dss.ws.Store.Runs.Run(ctx, runID)
	if err != nil {
		return nil, mapStoreErr(err)
	}
	if r.Status.Terminal() {
		return nil, Conflictf("run %s is %s: its datastores' credentials are no longer given out", runID, r.Status)
	}
	out := map[string]datastore.Credentials{}
	for _, name := range RunDatastores(&r.Spec) {
		c, err := dss.credentials(ctx, name)
		if errors.Is(err, store.ErrNotFound) {
			return nil, NotFoundf("datastore %s was deleted from the workspace after job %s was created", name, runID)
		}
		if err != nil {
			return nil, err
		}
		out[name] = c
	}
	if len(out) > 0 {
		if err := dss.ws.Store.Assets.MarkDatastoresUsed(ctx, slices.Sorted(maps.Keys(out)), runID, dss.ws.Now()); err != nil {
			dss.ws.Log.Warn("record the use of datastores' credentials", "run", runID, "err", err)
		}
	}
	return out, nil
}

// RunDatastores are the datastores whose credentials a run's spec needs: those its inputs' and
// outputs' Store name, sorted, each once.
func RunDatastores(sp *job.Spec) []string {
	seen := map[string]bool{}
	for _, in := range sp.Inputs {
		if in.Store != nil && in.Store.Datastore != "" {
			seen[in.Store.Datastore] = true
		}
	}
	for _, o := range sp.Outputs {
		if o.Store != nil && o.Store.Datastore != "" {
			seen[o.Store.Datastore] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// credentials unseals a datastore's credentials; none stored is the zero value.
func (dss *Datastores) credentials(ctx context.Context, name string) (datastore.Credentials, error) {
	var c datastore.Credentials
	sealed, err := dss.ws.Store.Assets.DatastoreCredentials(ctx, name)
	if err != nil || sealed == "" {
		return c, err
	}
	if dss.ws.Sealer == nil {
		return c, errors.New("no workspace key to unseal a datastore's credentials")
	}
	b, err := dss.ws.Sealer.Decrypt(sealed)
	if err != nil {
		return c, fmt.Errorf("unseal datastore %s's credentials: %w", name, err)
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return c, fmt.Errorf("datastore %s's credentials: not what was sealed", name)
	}
	return c, nil
}
