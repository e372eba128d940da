package objstore

import (
	"cmp"
	"slices"
	"time"
)

// The node's object cache is bounded: after its downloads a supervisor prunes it (Cache.Prune)
// down to a limit, least recently used first. "Used" is a file's modification time: a download
// sets it on the entry it reads from (a hit) or writes (a miss). An entry used within the last
// minute stays whatever its size: a download running beside the pruner may be about to copy it.
// A download never reads an entry by name twice: it opens it once, and a copy from an open
// file goes on even if a pruner removes the name meanwhile. A half-written object (tmp/) is a
// download in progress while it is being written; one untouched for an hour was left by a
// download that died, and goes.

// pruneRule is what Prune keeps.
type pruneRule struct {
	// Limit is the most bytes the cache may hold; negative: no limit (only dead downloads'
	// leftovers go).
	Limit int64
	// Busy: an entry used this recently is in use, never removed.
	Busy time.Duration
	// StaleTemp: a half-written object untouched this long belongs to no live download.
	StaleTemp time.Duration
}

var defaultPruneRule = pruneRule{Busy: time.Minute, StaleTemp: time.Hour}

// cached is one file of the cache as the pruner saw it.
type cached struct {
	Path string
	Size int64
	Used time.Time // last modification: the last download that used it
	Temp bool      // a half-written object, in tmp/
}

// choose says which files go: dead downloads' leftovers, then the least recently used entries
// until what stays fits the limit, never one used within Busy nor a live download's file.
func choose(files []cached, r pruneRule, now time.Time) []cached {
	var gone, entries []cached
	var total int64
	for _, f := range files {
		switch {
		case f.Temp && now.Sub(f.Used) >= r.StaleTemp:
			gone = append(gone, f)
		case f.Temp:
			total += f.Size
		default:
			total += f.Size
			entries = append(entries, f)
		}
	}
	if r.Limit < 0 {
		return gone
	}
	slices.SortFunc(entries, func(a, b cached) int {
		return cmp.Or(a.Used.Compare(b.Used), cmp.Compare(a.Path, b.Path))
	})
	for _, e := range entries {
		if total <= r.Limit {
			break
		}
		if now.Sub(e.Used) < r.Busy {
			continue
		}
		gone = append(gone, e)
		total -= e.Size
	}
	return gone
}
