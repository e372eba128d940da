package spec

import (
	"fmt"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/hangar-ml/hangar/internal/binding"
)

// Error is one problem in a spec file: the file as the user named it, the field path
// (dots, list indices as [i]), the 1-based line when known, and what was expected.
type Error struct {
	File string
	Path string
	Line int
	Msg  string
}

// Error formats the problem as "<File>: <Path>: <Msg> (line N)". Without a path it reads
// "<File>: line N: <Msg>", which is how YAML syntax errors are shown.
func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteString(": ")
	}
	switch {
	case e.Path != "":
		b.WriteString(e.Path)
		b.WriteString(": ")
		b.WriteString(e.Msg)
		if e.Line > 0 {
			fmt.Fprintf(&b, " (line %d)", e.Line)
		}
	case e.Line > 0:
		fmt.Fprintf(&b, "line %d: %s", e.Line, e.Msg)
	default:
		b.WriteString(e.Msg)
	}
	return b.String()
}

// ErrorList holds every problem found in one file, sorted by line. The parse functions
// return it as their error; errors.As finds both the list and its first *Error.
type ErrorList []*Error

// Error lists the problems one per line.
func (l ErrorList) Error() string {
	lines := make([]string, len(l))
	for i, e := range l {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap exposes the individual problems to errors.Is and errors.As.
func (l ErrorList) Unwrap() []error {
	errs := make([]error, len(l))
	for i, e := range l {
		errs[i] = e
	}
	return errs
}

// err sorts the list, drops repeated problems and returns nil when it is empty.
func (l ErrorList) err() error {
	if len(l) == 0 {
		return nil
	}
	sort.SliceStable(l, func(i, j int) bool { return l[i].Line < l[j].Line })
	seen := map[string]bool{}
	out := l[:0]
	for _, e := range l {
		if s := e.Error(); !seen[s] {
			seen[s] = true
			out = append(out, e)
		}
	}
	return out
}

// describe renders a node for "got ..." messages: strings quoted, other scalars as written.
func describe(n *yaml.Node) string {
	n = resolve(n)
	switch {
	case n == nil || isNull(n):
		return "null"
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case n.ShortTag() == "!!str" || n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0:
		return quote(n.Value)
	}
	return truncate(n.Value)
}

// quote quotes a user value for a message, shortening long ones; truncate only shortens.
// Messages of the binder and of the decoder write values alike.
func quote(s string) string { return binding.Quote(s) }

func truncate(s string) string { return binding.Truncate(s) }

// closest returns the candidate nearest to word by edit distance (ignoring case), or ""
// when none is close enough to be a plausible typo.
func closest(word string, candidates []string) string {
	best, bestDist := "", -1
	w := strings.ToLower(word)
	for _, c := range candidates {
		dist := editDistance(w, strings.ToLower(c))
		limit := max(1, min(len(w), len(c))/3)
		if dist > limit || (bestDist >= 0 && dist >= bestDist) {
			continue
		}
		best, bestDist = c, dist
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
