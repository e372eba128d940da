// Package mlflowapi is MLflow's tracking REST API and the mlflow-artifacts proxy, as the
// workspace server mounts them: MLflow 2.0 paths, JSON as MLflow's protos define it, errors in
// MLflow's shape, so that MLflow's clients log to Hangar unchanged.
package mlflowapi
