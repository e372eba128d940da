package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/store"
	"github.com/hangar-ml/hangar/internal/tokens"
)

// Run tokens let a run's supervisor authenticate as that run: minted and checked without being
// stored (tokens.Run, the one HMAC mechanism, holds their format); what a valid token may do, for
// which run and until when, is decided here (Admit).

// Admit decides whether a token with a valid MAC may act for its run at now:
//   - a token of another attempt than the run's is refused (a requeued run's old supervisor);
//   - once the run has ended, its token works for grace more (a late retry of the final report,
//     a worker learning the end), then never again, whatever the token says;
//   - an expired token is refused once the run has started. Supervisors get a fresh token with
//     the run spec and every heartbeat reply, so a live one never holds an expired token; a run
//     that waits in an engine's queue (Slurm) longer than a token lives still starts with the
//     token written at submit.
//
// First-format tokens (no attempt, no expiry) are admitted under the same end-of-run rule, so
// the supervisors of runs live across an upgrade finish their runs and are then shut out.
func Admit(c tokens.RunClaims, r *job.Run, now time.Time, grace time.Duration) error {
	if !c.Legacy() && c.Attempt != max(r.Attempt, 1) {
		return conflictf("run %s is on attempt %d; this token is for attempt %d", r.ID, max(r.Attempt, 1), c.Attempt)
	}
	if r.Status.Terminal() && (r.EndedAt == nil || now.Sub(*r.EndedAt) > grace) {
		msg := fmt.Sprintf("run %s has ended; its token is no longer valid", r.ID)
		if r.EndedAt != nil {
			msg = fmt.Sprintf("run %s ended at %s; its token is no longer valid", r.ID, r.EndedAt.UTC().Format(time.RFC3339))
		}
		return &Error{Kind: Unauthorized, Msg: msg}
	}
	if !c.Legacy() && now.After(c.Expires) && started(r.Status) {
		return &Error{Kind: Unauthorized, Msg: fmt.Sprintf("this token of run %s expired at %s (supervisors renew theirs through heartbeats)",
			r.ID, c.Expires.Format(time.RFC3339))}
	}
	return nil
}

// started reports whether a run's supervisor has begun (it fetched the spec and reported).
func started(s job.State) bool {
	switch s {
	case job.NotStarted, job.Queued, job.Provisioning:
		return false
	}
	return true
}

// tokenFor mints a token for a run's current attempt, valid for TokenTTL from now.
func (c *Controller) tokenFor(r *job.Run) string {
	return c.Tokens.Mint(r.ID, r.Attempt, c.Now().Add(c.Settings.TokenTTL))
}

// RunToken mints a token for a run's current attempt (the dispatcher sends it with an
// assignment). Its hook has no context, hence the bounded one here.
func (c *Controller) RunToken(runID string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := c.Store.Runs.Run(ctx, runID)
	if err != nil {
		c.Log.Warn("mint run token: read run", "run", runID, "err", err)
		r = &job.Run{ID: runID, Attempt: 1} // a token the server refuses if the attempt moved on
	}
	return c.tokenFor(r)
}

// Authenticate returns the run a run token may act for now, or why it may not (see Admit): the
// run's life as read then (its id, attempt, state and end), which the server's one check of a
// run token's writes reads (Ended).
func (c *Controller) Authenticate(ctx context.Context, token string) (*job.Run, error) {
	cl, ok := c.Tokens.Verify(token)
	if !ok {
		return nil, &Error{Kind: Unauthorized, Msg: "missing or invalid token (set HANGAR_TOKEN)"}
	}
	r, err := c.Store.Runs.RunLife(ctx, cl.RunID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, &Error{Kind: Unauthorized, Msg: fmt.Sprintf("run %s does not exist; its token is not valid", cl.RunID)}
	}
	if err != nil {
		return nil, fmt.Errorf("authenticate run %s: %w", cl.RunID, err)
	}
	if err := Admit(cl, r, c.Now(), c.Settings.TokenGrace); err != nil {
		return nil, err
	}
	return r, nil
}

// Ended refuses a change to run r once it has ended (nil while it has not): a conflict naming
// the run, its end and what (the part that was to change) can no longer change. It is the one
// terminal check of what a run's token writes, whatever the route (the server applies it to
// every write of a run token, native and MLflow), and of the controller's own writers
// (activeRun).
func Ended(r *job.Run, what string) error {
	if !r.Status.Terminal() {
		return nil
	}
	return conflictf("run %s ended (%s)%s: %s can no longer change", r.ID, r.Status, endedAt(r), what)
}
