package serving

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"time"
)

// Restart backoff of a deployment whose replicas keep failing: 1 s, doubling, at most 5 minutes.
const (
	restartBase = time.Second
	restartMax  = 5 * time.Minute
)

// Key names a deployment of an endpoint.
type Key struct{ Endpoint, Deployment string }

func (k Key) String() string { return k.Endpoint + "/" + k.Deployment }

// Want is what the replica plan knows of a deployment: its generation (replicas of an older one
// are replaced), how many replicas it should have now (the autoscaler's answer), and its
// failures in a row (replicas that ended on their own since the last one that became ready).
type Want struct {
	Key        Key
	Generation int
	Replicas   int
	// Failures and LastFailure drive the restart backoff.
	Failures    int
	LastFailure time.Time
}

// ReplicaView is what the plan knows of one replica run.
type ReplicaView struct {
	RunID      string
	Key        Key
	Generation int
	Created    time.Time
	// Ready: its supervisor reported the address it answers at. Ended: its run is over.
	Ready, Ended bool
	// Stopping: a stop was already asked for.
	Stopping bool
}

// Stop is a replica to stop, and why (shown in its run's status).
type Stop struct {
	RunID, Reason string
}

// ReplicaPlan is what to do now: start replicas, stop some, forget the ended ones, and when to
// look again at the latest (a backoff running out).
type ReplicaPlan struct {
	Start  map[Key]int
	Stop   []Stop
	Forget []string
	Wake   time.Time
}

// PlanReplicas decides the replica runs of every deployment. It is pure.
//
// A deployment's current-generation replicas are brought to its count (a deployment whose
// replicas keep failing starts the next one only after its backoff). Replicas of an older
// generation stop once as many current ones are ready as the count asks (or, at count 0,
// at once), so that an update never leaves the deployment without a ready replica; replicas of
// a deployment that is gone stop at once. Scaling down stops the newest, the not-ready first.
func PlanReplicas(wants []Want, replicas []ReplicaView, now time.Time) ReplicaPlan {
	plan := ReplicaPlan{Start: map[Key]int{}}
	byKey := map[Key][]ReplicaView{}
	for _, r := range replicas {
		if r.Ended {
			plan.Forget = append(plan.Forget, r.RunID)
			continue
		}
		byKey[r.Key] = append(byKey[r.Key], r)
	}
	wanted := map[Key]bool{}
	for _, w := range wants {
		wanted[w.Key] = true
		planDeployment(&plan, w, byKey[w.Key], now)
	}
	for _, k := range slices.SortedFunc(maps.Keys(byKey), func(a, b Key) int { return cmp.Compare(a.String(), b.String()) }) {
		if wanted[k] {
			continue
		}
		for _, r := range byKey[k] {
			if !r.Stopping {
				plan.Stop = append(plan.Stop, Stop{r.RunID, fmt.Sprintf("deployment %s was deleted", k)})
			}
		}
	}
	slices.Sort(plan.Forget)
	return plan
}

func planDeployment(plan *ReplicaPlan, w Want, reps []ReplicaView, now time.Time) {
	var current, old []ReplicaView
	ready := 0
	for _, r := range reps {
		if r.Stopping {
			continue
		}
		if r.Generation == w.Generation {
			current = append(current, r)
			if r.Ready {
				ready++
			}
		} else {
			old = append(old, r)
		}
	}
	switch n := w.Replicas - len(current); {
	case n > 0:
		if at := restartAt(w); now.Before(at) {
			if plan.Wake.IsZero() || at.Before(plan.Wake) {
				plan.Wake = at
			}
		} else {
			plan.Start[w.Key] = n
		}
	case n < 0:
		// The newest go first, not-ready before ready.
		slices.SortFunc(current, func(a, b ReplicaView) int {
			if a.Ready != b.Ready {
				if a.Ready {
					return 1
				}
				return -1
			}
			return cmp.Or(b.Created.Compare(a.Created), cmp.Compare(a.RunID, b.RunID))
		})
		for _, r := range current[:-n] {
			plan.Stop = append(plan.Stop, Stop{r.RunID, fmt.Sprintf("scaled in to %d replica(s)", w.Replicas)})
		}
	}
	if ready >= w.Replicas {
		for _, r := range old {
			plan.Stop = append(plan.Stop, Stop{r.RunID, fmt.Sprintf("replaced by generation %d of deployment %s", w.Generation, w.Key)})
		}
	}
}

// restartAt is when a deployment whose replicas failed Failures times in a row may start the next.
func restartAt(w Want) time.Time {
	if w.Failures == 0 {
		return time.Time{}
	}
	d := restartBase << min(w.Failures-1, 20)
	return w.LastFailure.Add(min(d, restartMax))
}
