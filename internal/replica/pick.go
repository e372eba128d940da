package replica

import (
	"sort"
	"strings"
	"time"

	"github.com/hangar-ml/hangar/internal/store"
)

// Live is how long a server's record counts after it was last refreshed.
const Live = 15 * time.Second

// CurrentLeader is the leader as recorded: of the live records saying they lead, the one that
// took the lead last (an older leader that died still says so until its record goes stale).
func CurrentLeader(recs []store.ServerRecord, now time.Time) (store.ServerRecord, bool) {
	var best store.ServerRecord
	found := false
	for _, r := range recs {
		if !r.Leader || now.Sub(r.Seen) > Live {
			continue
		}
		if !found || r.Since.After(best.Since) || (r.Since.Equal(best.Since) && r.ID > best.ID) {
			best, found = r, true
		}
	}
	return best, found
}

// NodeURLs is the comma-separated list of server addresses handed to nodes (agents and the
// supervisors they start): self first, then every other live server by address. A node that
// cannot reach one moves to the next; any server answers it (followers forward to the leader).
func NodeURLs(self string, recs []store.ServerRecord, now time.Time) string {
	out := []string{self}
	var others []string
	for _, r := range recs {
		if r.URL != "" && r.URL != self && now.Sub(r.Seen) <= Live {
			others = append(others, r.URL)
		}
	}
	sort.Strings(others)
	for i, u := range others {
		if i == 0 || u != others[i-1] {
			out = append(out, u)
		}
	}
	return strings.Join(out, ",")
}

// Stale lists the records not refreshed for long enough to be forgotten (ten times Live).
func Stale(recs []store.ServerRecord, now time.Time) []string {
	var out []string
	for _, r := range recs {
		if now.Sub(r.Seen) > 10*Live {
			out = append(out, r.ID)
		}
	}
	return out
}

// OnOwnClock returns the records with their Seen times moved from the database's clock to this
// server's (skew is the database's clock minus this server's), so that they are judged against
// this server's now; Since stays on the database's clock (it only orders leaders).
func OnOwnClock(recs []store.ServerRecord, skew time.Duration) []store.ServerRecord {
	out := make([]store.ServerRecord, len(recs))
	for i, r := range recs {
		r.Seen = r.Seen.Add(-skew)
		out[i] = r
	}
	return out
}
