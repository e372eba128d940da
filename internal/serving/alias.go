package serving

import (
	"fmt"
	"time"
)

// AliasRetry is how long a deployment whose roll to its alias's version failed waits before the
// alias loop tries that version again (another version is tried at once).
const AliasRetry = 30 * time.Second

// AliasInput is one deployment that follows a model alias (model: azureml:<name>@<alias>), as the
// alias loop sees it.
type AliasInput struct {
	Model, Alias string
	// Serving is the version the deployment's definition resolved, the one its replicas serve.
	Serving string
	// Target is the version the alias names now; "" when the alias is gone.
	Target string
	// Failed is the version a roll last failed to reach, at FailedAt, because FailedWhy; ""
	// when the last roll did not fail.
	Failed    string
	FailedAt  time.Time
	FailedWhy string
	Now       time.Time
}

// AliasDecision is what to do with a deployment that follows an alias: roll it to To (its
// replicas replaced the rolling way, new ones ready before old ones stop), and what its state
// should warn of ("" nothing).
type AliasDecision struct {
	Roll    bool
	To      string
	Warning string
}

// DecideAlias decides whether a deployment follows its alias now. A deployment keeps serving
// what it serves when its alias is gone (with a warning), and when a roll to the alias's
// version failed less than AliasRetry ago.
func DecideAlias(in AliasInput) AliasDecision {
	switch {
	case in.Target == "":
		return AliasDecision{Warning: fmt.Sprintf("model %s has no alias %s any more: still serving version %s (set the alias, or update the deployment to name a version)",
			in.Model, in.Alias, in.Serving)}
	case in.Target == in.Serving:
		return AliasDecision{}
	case in.Failed == in.Target && in.Now.Before(in.FailedAt.Add(AliasRetry)):
		return AliasDecision{Warning: fmt.Sprintf("alias %s of model %s names version %s, but rolling to it failed (%s): still serving version %s, trying again at %s",
			in.Alias, in.Model, in.Target, in.FailedWhy, in.Serving, in.FailedAt.Add(AliasRetry).UTC().Format(time.RFC3339))}
	}
	return AliasDecision{Roll: true, To: in.Target}
}
