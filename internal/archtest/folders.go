package archtest

import (
	"fmt"
	"slices"
	"strings"
)

// folder is the top folder a package lives in: internal/backend for internal/backend/cluster.
func folder(path string) string {
	parts := strings.SplitN(path, "/", 3)
	if len(parts) < 2 {
		return path
	}
	return parts[0] + "/" + parts[1]
}

// FolderCycles finds import cycles between top folders (internal/backend → internal/provider →
// internal/agent → internal/backend is one, though no package cycle exists): each is a sentence
// naming the folders of one strongly connected group, sorted.
func FolderCycles(pkgs []Package) []string {
	edges := map[string]map[string]bool{}
	for _, p := range pkgs {
		from := folder(p.Path)
		for _, imp := range p.Imports {
			if to := folder(imp); to != from {
				if edges[from] == nil {
					edges[from] = map[string]bool{}
				}
				edges[from][to] = true
			}
		}
	}
	var out []string
	for _, group := range stronglyConnected(edges) {
		if len(group) > 1 {
			slices.Sort(group)
			out = append(out, fmt.Sprintf("folders %s import each other (through their packages): move what they share down a layer", strings.Join(group, ", ")))
		}
	}
	slices.Sort(out)
	return out
}

// stronglyConnected returns the strongly connected groups of a graph (Tarjan's algorithm).
func stronglyConnected(edges map[string]map[string]bool) [][]string {
	index, low, onStack := map[string]int{}, map[string]int{}, map[string]bool{}
	var stack []string
	var groups [][]string
	var visit func(v string)
	visit = func(v string) {
		index[v], low[v] = len(index), len(index)
		stack = append(stack, v)
		onStack[v] = true
		for _, w := range sortedKeys(edges[v]) {
			if _, seen := index[w]; !seen {
				visit(w)
				low[v] = min(low[v], low[w])
			} else if onStack[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] != index[v] {
			return
		}
		var group []string
		for {
			w := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			onStack[w] = false
			group = append(group, w)
			if w == v {
				break
			}
		}
		groups = append(groups, group)
	}
	for _, v := range sortedKeys(edges) {
		if _, seen := index[v]; !seen {
			visit(v)
		}
	}
	return groups
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
