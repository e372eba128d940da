package snapshot

import (
	"slices"
	"strings"
)

// WithoutEscapingLinks returns m without its symbolic links whose target, followed as the OS
// would through the tree's other links, leaves the tree or never ends, and those links in path
// order; m is not modified. A link is left out, never followed: what it points at is not read.
// One pass is enough: a link that stays inside never went through one that is left out (going
// through it, it would have left too), so it still resolves the same way without it.
func WithoutEscapingLinks(m *Manifest) (*Manifest, []*LinkError) {
	es := slices.Clone(m.Entries)
	sortEntries(es)
	links := linkTargets(es)
	var dropped []*LinkError
	kept := es[:0]
	for _, e := range es {
		if le := linkProblem(links, e); le != nil {
			dropped = append(dropped, le)
			continue
		}
		kept = append(kept, e)
	}
	slices.SortFunc(dropped, func(a, b *LinkError) int { return strings.Compare(a.Path, b.Path) })
	return &Manifest{Entries: kept}, dropped
}
