package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hangar-ml/hangar/internal/serving"
)

// EndpointRecord is an online endpoint as stored: its definition and its keys, sealed.
type EndpointRecord struct {
	Spec serving.Endpoint
	// Keys is the sealed JSON of its keys (the controller seals and unseals it).
	Keys      string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// DeploymentRecord is a deployment as stored. Generation counts its updates: a replica of an
// older generation is replaced. State and Reason are its provisioning state (Creating, Updating,
// Succeeded, Failed, Deleting) and why.
type DeploymentRecord struct {
	Spec       serving.Deployment
	Generation int
	State      string
	Reason     string
	// LastFailed is the last replica run that ended on its own ("" : none).
	LastFailed string
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// Replica is a run serving a deployment; Address is where it answers ("" until its supervisor
// reported it).
type Replica struct {
	RunID      string
	Endpoint   string
	Deployment string
	Generation int
	Address    string
	CreatedAt  time.Time
}

// PutEndpoint creates an endpoint (create) or replaces its definition (update, keeping its keys
// unless Keys is given). Creating one that exists is ErrExists; updating one that does not
// is ErrNotFound.
func (s *Serving) PutEndpoint(ctx context.Context, e EndpointRecord, create bool) error {
	spec, err := json.Marshal(e.Spec)
	if err != nil {
		return err
	}
	update := stmt{`UPDATE endpoints SET spec = ?, updated_at = ? WHERE name = ?`, []any{string(spec), nanos(e.UpdatedAt), e.Spec.Name}}
	if e.Keys != "" {
		update = stmt{`UPDATE endpoints SET spec = ?, updated_at = ?, keys = ? WHERE name = ?`,
			[]any{string(spec), nanos(e.UpdatedAt), e.Keys, e.Spec.Name}}
	}
	return putRow(ctx, s.db, "endpoint "+e.Spec.Name, create,
		stmt{`INSERT INTO endpoints (name, spec, keys, created_at, updated_at) VALUES (?, ?, ?, ?, ?)`,
			[]any{e.Spec.Name, string(spec), e.Keys, nanos(e.CreatedAt), nanos(e.UpdatedAt)}},
		update)
}

// Endpoint reads one endpoint.
func (s *Serving) Endpoint(ctx context.Context, name string) (*EndpointRecord, error) {
	e, err := scanEndpoint(s.db.QueryRowContext(ctx,
		`SELECT spec, keys, created_at, updated_at FROM endpoints WHERE name = ?`, name))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("endpoint %s: %w", name, ErrNotFound)
	}
	return e, err
}

// Endpoints lists the endpoints by name.
func (s *Serving) Endpoints(ctx context.Context) ([]EndpointRecord, error) {
	return queryAll(ctx, s.db, values(scanEndpoint), `SELECT spec, keys, created_at, updated_at FROM endpoints ORDER BY name`)
}

// DeleteEndpoint removes an endpoint and its deployments (their replicas' rows stay until their
// runs end: see DeleteReplica).
func (s *Serving) DeleteEndpoint(ctx context.Context, name string) error {
	return s.deleteWithChildren(ctx, "deployments", "endpoints", "endpoint", name)
}

func scanEndpoint(sc scanner) (*EndpointRecord, error) {
	var e EndpointRecord
	var spec string
	var created, updated int64
	if err := sc.Scan(&spec, &e.Keys, &created, &updated); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(spec), &e.Spec); err != nil {
		return nil, fmt.Errorf("endpoint spec: %w", err)
	}
	e.CreatedAt, e.UpdatedAt = fromNanos(created), fromNanos(updated)
	return &e, nil
}
