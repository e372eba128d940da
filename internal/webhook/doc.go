// Package webhook delivers MLflow's registry webhooks (MLflow 3.3's API, docs/mlflow.md
// "Webhooks"): the webhooks' verbs with their checks and sealed secrets (Service), MLflow's
// events and example payloads (events.go), the signed POST (sign.go, send.go: MLflow's
// X-MLflow-* headers, no redirects followed, a timeout, a small read of the answer), the pure
// choice of what an attempt's outcome leads to (decide.go: delivered, again later with
// jittered backoff, or given up), and the loop that sends the store's due deliveries (loop.go).
// The registry's writes append the events themselves, in their own transactions (the store's
// outbox), so a delivery is sent at least once, across restarts.
package webhook
