package router

import (
	"errors"
	"net"
	"net/http"
	"strings"

	"github.com/hangar-ml/hangar/internal/serving/scoring"
)

// A replica whose process is gone (its supervisor was killed and took it along, or its node
// went away) refuses connections until the controller sees its run end and takes it out of the
// table, which may take the node's stale-after. A request that could not even connect never
// reached the model, so the router takes such a replica out of the rotation at once (back once
// its readiness probe passes again) and sends the request to another replica of the same
// deployment. A request whose bytes went out is never sent again: the model may have run it.
// Connections the replica closed while idle are retried by the transport itself, which knows
// that nothing of the request was written (the request's GetBody lets it).

// maxTries bounds how many replicas one request is offered to.
const maxTries = 4

// unreached says whether err, what forwarding a request to a replica returned, means that the
// request never reached it: the connection could not be made (refused, no route, timed out).
// Anything else (reset, EOF, a timeout while waiting for the answer) happened after the request
// may have been read.
func unreached(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// retryable decides whether a request whose forwarding failed with err may go to another
// replica: only when it did not reach this one and the caller still waits (ctxErr is the
// request's context's error).
func retryable(err, ctxErr error) bool {
	return ctxErr == nil && unreached(err)
}

// draining says whether an answer's header says its replica is going away (scoring.DrainHeader:
// Hangar's scoring server once its supervisor is gone, see score.py): the router takes it out of
// the rotation as it would an unreachable one; the header does not reach the caller.
func draining(h http.Header) bool { return strings.EqualFold(h.Get(scoring.DrainHeader), "draining") }

// takeOut takes a replica out of the rotation until its readiness probe passes again (as a
// failed readiness would): it could not be connected to, or it said it is draining.
func (r *Router) takeOut(d *depState, rs *replicaState, why string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	rs.probe.readyOK = 0
	if rs.probedOut {
		return
	}
	rs.probedOut = true
	d.broadcastLocked() // requests queued for a slot look again: this replica's will not free
	r.log.Warn("replica out of rotation until its readiness probe passes", "endpoint", d.endpoint,
		"deployment", d.name, "replica", rs.id, "why", why)
}

// sign puts the replica's secret on a request to it, in place of whatever the caller sent there.
func (rs *replicaState) sign(h http.Header) {
	h.Del(scoring.SecretHeader)
	if rs.secret != "" {
		h.Set(scoring.SecretHeader, rs.secret)
	}
}
