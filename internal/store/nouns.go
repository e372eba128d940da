package store

// The store's methods are grouped by aggregate, each a noun type reached through a field of
// Store (st.Runs.Run, st.RunWrites.UpdateRun), as client-go's typed clients are. Each embeds the
// base the aggregates share (the database, its dialect, transactions, the WAL's sync) and names
// the other aggregates it calls; none embeds the Store, whose own methods (migrations, backup,
// leadership, settings) and aggregates would all be promoted into it (archtest checks). So only
// the Store and RunWrites itself reach RunWrites.

// RunWrites holds every method that inserts, updates or deletes rows of the runs table: run
// creation (jobs, parents and their children, MLflow's runs), status transitions, archive,
// delete, the bound command, MLflow's updates and stage, and MLflow's log-batch and delete-tag
// (a run's name and description are columns, written through the mlflow.runName and mlflow.note
// tags). The run core alone calls them.
type RunWrites struct {
	*base
	tracking *Tracking
	// logs commits the MLflow API's log-batches together (tracking_log.go).
	logs logQueue
}

// Runs reads runs and keeps what hangs off them in other tables: events, parts, checkpoints,
// preemption losses, logs and metrics.
type Runs struct{ *base }

// Parents keeps the rows of sweeps and pipelines (trials, steps, outcomes, reasons).
type Parents struct {
	*base
	runs *Runs
}

// Tracking is MLflow's view: experiments, runs' params, tags, inputs and metric history, and
// MLflow's artifacts.
type Tracking struct {
	*base
	runs *Runs
}

// Assets holds models, data, environments, components, datastores, connections and job secrets.
type Assets struct{ *base }

// Cluster holds computes, nodes and their assignments, pools' state, placements,
// preemptions and sizes.
type Cluster struct{ *base }

// Serving holds online endpoints, their deployments and replicas, and batch endpoints and
// deployments.
type Serving struct{ *base }

// Access holds users, their tokens and OIDC subjects, and the audit log.
type Access struct{ *base }

// Instances holds compute instances.
type Instances struct{ *base }

// Webhooks holds MLflow's registry webhooks and their deliveries; the registry's writes append
// the events they tell of (webhooks.go).
type Webhooks struct{ *base }

// nouns sets s's aggregate fields; every Store is made through it.
func (s *Store) nouns() *Store {
	s.Runs = &Runs{s.base}
	s.Tracking = &Tracking{base: s.base, runs: s.Runs}
	s.RunWrites = &RunWrites{base: s.base, tracking: s.Tracking}
	s.Parents = &Parents{base: s.base, runs: s.Runs}
	s.Assets = &Assets{s.base}
	s.Cluster = &Cluster{s.base}
	s.Serving = &Serving{s.base}
	s.Access = &Access{s.base}
	s.Instances = &Instances{s.base}
	s.Webhooks = &Webhooks{s.base}
	return s
}
