package store

// The store's methods are grouped by aggregate, each a noun type reached through a field of
// Store (st.Runs.Run, st.RunWrites.UpdateRun), as client-go's typed clients are. Each embeds the
// Store for its database and what is truly the store's own (transactions, migrations, backup,
// leadership, settings).

// RunWrites holds every method that inserts, updates or deletes rows of the runs table: run
// creation (jobs, parents and their children, MLflow's runs), status transitions, archive,
// delete, the bound command, MLflow's updates and stage, and MLflow's log-batch and delete-tag
// (a run's name and description are columns, written through the mlflow.runName and mlflow.note
// tags). The run core alone calls them.
type RunWrites struct{ *Store }

// Runs reads runs and keeps what hangs off them in other tables: events, parts, checkpoints,
// preemption losses, logs and metrics.
type Runs struct{ *Store }

// Parents keeps the rows of sweeps and pipelines (trials, steps, outcomes, reasons).
type Parents struct{ *Store }

// Tracking is MLflow's view: experiments, runs' params, tags, inputs and metric history, and
// MLflow's artifacts.
type Tracking struct{ *Store }

// Assets holds models, data, environments, components, datastores and job secrets.
type Assets struct{ *Store }

// Cluster holds computes, nodes and their assignments, pools' state, placements,
// preemptions and sizes.
type Cluster struct{ *Store }

// Serving holds online endpoints, their deployments and replicas, and batch endpoints and
// deployments.
type Serving struct{ *Store }

// Access holds users, their tokens and OIDC subjects, and the audit log.
type Access struct{ *Store }

// Instances holds compute instances.
type Instances struct{ *Store }

// nouns sets s's aggregate fields; every Store is made through it.
func (s *Store) nouns() *Store {
	s.RunWrites = &RunWrites{s}
	s.Runs = &Runs{s}
	s.Parents = &Parents{s}
	s.Tracking = &Tracking{s}
	s.Assets = &Assets{s}
	s.Cluster = &Cluster{s}
	s.Serving = &Serving{s}
	s.Access = &Access{s}
	s.Instances = &Instances{s}
	return s
}
