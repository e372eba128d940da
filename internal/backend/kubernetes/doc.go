// Package kubernetes runs Hangar's runs on an attached Kubernetes cluster as batch/v1 Jobs:
// Kubernetes (and Kueue where installed) places the pods, Hangar's supervisor inside each pod
// keeps the run's contract (code, environment, logs, metrics, outputs, the result).
//
// manifest.go builds the objects of a run and judge.go reads their state; both are pure. The
// Backend (backend.go) does the API calls through client-go.
package kubernetes
