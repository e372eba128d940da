package tokens

import "strconv"

// replicaDomain keeps a replica's secret from ever verifying as another kind of token.
const replicaDomain = "replica-secret/1:"

const replicaPrefix = "hrs1."

// Replica derives the secret an online deployment's replica checks on every request
// ("hrs1.<mac>", one per run attempt): the router sends it, the run's supervisor hands it to the
// replica's server, nobody else holds it. Derived, it is never stored, and a requeued
// replica's new attempt gets a new one.
type Replica struct{ Key Key }

// Secret is the secret of attempt of replica run runID.
func (t Replica) Secret(runID string, attempt int) string {
	return replicaPrefix + t.Key.signHex(replicaDomain, runID+"."+strconv.Itoa(max(attempt, 1)))
}
