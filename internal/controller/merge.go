package controller

import (
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/hangar-ml/hangar/internal/snapshot"
	"github.com/hangar-ml/hangar/internal/store"
)

// assemblyPlan is when a run's artifacts can be assembled from its nodes' parts.
type assemblyPlan struct {
	ready bool
	// from are the nodes whose parts go in; waiting the nodes still awaited (when not ready) or
	// left out (when ready: they did not deliver in time).
	from, waiting []int
}

// planAssembly decides whether a run of `nodes` nodes can have its artifacts assembled now:
// when every node registered its part, or when node 0 registered its own at least `wait` ago
// (the others are then left out, and the run says so). final is node 0 reporting the run's end,
// which assembles whatever was registered.
func planAssembly(parts []store.RunPart, nodes int, now time.Time, wait time.Duration, final bool) assemblyPlan {
	got := map[int]bool{}
	var p assemblyPlan
	var lead time.Time
	for _, part := range parts {
		if part.Registered() && part.Node < nodes {
			got[part.Node] = true
			p.from = append(p.from, part.Node)
			if part.Node == 0 {
				lead = part.RegisteredAt
			}
		}
	}
	for n := 0; n < nodes; n++ {
		if !got[n] {
			p.waiting = append(p.waiting, n)
		}
	}
	switch {
	case len(p.from) == 0:
		p.ready = false
	case len(p.waiting) == 0, final:
		p.ready = true
	default:
		p.ready = got[0] && !now.Before(lead.Add(wait))
	}
	return p
}

// mergeTrees merges the nodes' trees, given in node order: every path keeps the entry of the
// lowest node that has it (node 0 wins), so what node 0 wrote is never replaced. A later node's
// entry that differs from the kept one (other content, or a file where a directory is) is left
// out and its path returned in conflicts; an entry below such a path goes with it.
func mergeTrees(trees []*snapshot.Manifest) (*snapshot.Manifest, []string) {
	out := &snapshot.Manifest{}
	kept := map[string]snapshot.Entry{}
	var conflicts []string
	for _, t := range trees {
		if t == nil {
			continue
		}
		for _, e := range t.Entries {
			if underNonDir(kept, e.Path) {
				continue
			}
			if k, ok := kept[e.Path]; ok {
				if !sameEntry(k, e) && !slices.Contains(conflicts, e.Path) {
					conflicts = append(conflicts, e.Path)
				}
				continue
			}
			kept[e.Path] = e
			out.Entries = append(out.Entries, e)
		}
	}
	sort.Slice(out.Entries, func(i, j int) bool { return out.Entries[i].Path < out.Entries[j].Path })
	sort.Strings(conflicts)
	return out, conflicts
}

// underNonDir reports whether a parent of p is kept as a file or symlink.
func underNonDir(kept map[string]snapshot.Entry, p string) bool {
	for d := path.Dir(p); d != "."; d = path.Dir(d) {
		if e, ok := kept[d]; ok && e.Type != snapshot.TypeDir {
			return true
		}
	}
	return false
}

// sameEntry reports whether two nodes wrote the same thing at a path (modes aside).
func sameEntry(a, b snapshot.Entry) bool {
	return a.Type == b.Type && a.Hash == b.Hash && a.Target == b.Target
}

// conflictWarning names the paths that two nodes wrote differently, a few of them.
func conflictWarning(what string, conflicts []string) string {
	const show = 5
	list := strings.Join(conflicts[:min(len(conflicts), show)], ", ")
	if len(conflicts) > show {
		list += fmt.Sprintf(" and %d more", len(conflicts)-show)
	}
	return fmt.Sprintf("%s: nodes wrote different files at the same path (%s); the lowest node's are kept", what, list)
}

// missingWarning says which nodes' logs and outputs are not in the artifacts.
func missingWarning(nodes []int, wait time.Duration) string {
	return fmt.Sprintf("node(s) %v delivered no logs or outputs before the run's artifacts were assembled "+
		"(waiting up to %s after node 0's): their files are missing from the artifacts", nodes, wait)
}
