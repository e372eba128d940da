// Package scoring holds Hangar's scoring server for code_configuration deployments (and, with
// its built-in MLflow scorer in place of a script, for no-code MLflow deployments): a Python
// program (standard library only) that imports the deployment's scoring script, calls its
// init() once and its run(raw_data) for each POST /score, following the Azure ML inference
// server's contract (see score.py's docstring for what is and is not supported). It is
// embedded in the hangar binary; the supervisor writes it beside a replica's run.
package scoring

import (
	"bytes"
	_ "embed"
)

// How a replica answers only the workspace's router (score.py checks the first two, and the
// supervisor's proxy in front of an image that serves by its own entrypoint does likewise).
const (
	// SecretHeader carries the replica's secret on every request of the router; a request
	// without it is refused (401; a wrong one 403), but for the health route.
	SecretHeader = "X-Hangar-Replica-Secret"
	// SecretEnv hands the secret to the replica's server.
	SecretEnv = "HANGAR_REPLICA_SECRET"
	// HostEnv is the address the replica's server listens on (with PORT).
	HostEnv = "HANGAR_SERVE_HOST"
	// DrainHeader, "draining" on an answer, says the replica is going away (its supervisor is
	// gone): the router takes it out of its rotation.
	DrainHeader = "X-Hangar-Replica"
)

// FileName is the name the scoring server is written under. It is not score.py, the name
// most scoring scripts have, so that neither can import the other by mistake.
const FileName = "hangar_scoring_server.py"

// MLflowFileName is the name the built-in MLflow scorer is written under, beside the scoring
// server, which imports it when MLflowEnv names it (a no-code MLflow deployment).
const (
	MLflowFileName = "hangar_mlflow_scorer.py"
	MLflowEnv      = "HANGAR_MLFLOW_SCORER"
)

// MLflowBatchFileName is the name the built-in MLflow batch scorer is written under: the entry
// script of a no-code MLflow batch deployment's parallel job, which imports the MLflow scorer
// (named by MLflowEnv) for its loaders and signature.
const MLflowBatchFileName = "hangar_mlflow_batch.py"

//go:embed score.py
var script []byte

//go:embed mlflow_scorer.py
var mlflowScorer []byte

//go:embed mlflow_batch.py
var mlflowBatch []byte

// Script returns the scoring server's source (a copy: callers may keep or change it).
func Script() []byte { return bytes.Clone(script) }

// MLflowScorer returns the built-in MLflow scorer's source (a copy): it loads an MLflow model's
// python_function flavour without mlflow and speaks MLflow's and Azure's scoring protocols.
func MLflowScorer() []byte { return bytes.Clone(mlflowScorer) }

// MLflowBatch returns the built-in MLflow batch scorer's source (a copy): the entry script that
// scores a no-code MLflow batch deployment's files, one predict() per file, into Azure's
// predictions.csv rows (row, prediction, file name).
func MLflowBatch() []byte { return bytes.Clone(mlflowBatch) }
