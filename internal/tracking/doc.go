// Package tracking is the pure part of MLflow-compatible tracking (docs/mlflow.md): MLflow's
// search filter grammar and order-by parsed into clauses and compiled to parameterized SQL,
// page tokens, MLflow's limits and key/value validation, and the mapping between run states.
// It decides; the store and the server act.
package tracking
