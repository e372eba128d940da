package sizes

import (
	"context"
	"fmt"
	"sort"
	"strings"
)

// Catalog finds sizes by name, case-insensitively.
type Catalog struct {
	byName map[string]Size
}

// NewCatalog merges lists of sizes; a name met again replaces the earlier entry.
func NewCatalog(lists ...[]Size) *Catalog {
	c := &Catalog{byName: map[string]Size{}}
	for _, l := range lists {
		for _, s := range l {
			c.byName[strings.ToLower(s.Name)] = s
		}
	}
	return c
}

// Lookup returns the size with this name, in any case.
func (c *Catalog) Lookup(name string) (Size, bool) {
	s, ok := c.byName[strings.ToLower(name)]
	return s, ok
}

// List returns every size, ordered by source (built-in, machine, workspace), then GPUs, cores
// and name.
func (c *Catalog) List() []Size {
	out := make([]Size, 0, len(c.byName))
	for _, s := range c.byName {
		out = append(out, s)
	}
	rank := map[string]int{SourceBuiltin: 0, SourceMachine: 1, SourceWorkspace: 2}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		switch {
		case rank[a.Source] != rank[b.Source]:
			return rank[a.Source] < rank[b.Source]
		case a.GPUs != b.GPUs:
			return a.GPUs < b.GPUs
		case a.Cores != b.Cores:
			return a.Cores < b.Cores
		}
		return strings.ToLower(a.Name) < strings.ToLower(b.Name)
	})
	return out
}

// Reserved reports whether name belongs to a built-in or machine size, which a workspace
// size may not shadow.
func Reserved(name string) bool {
	_, ok := NewCatalog(Builtin()).Lookup(name)
	return ok || strings.HasPrefix(strings.ToLower(name), "local-")
}

// Lister is where the workspace's own sizes are kept (the store).
type Lister interface {
	Sizes(ctx context.Context) ([]Size, error)
}

// Load builds the workspace's catalog: built-in sizes, this machine's local-* sizes and the
// workspace's own.
func Load(ctx context.Context, ws Lister, m Machine) (*Catalog, error) {
	own, err := ws.Sizes(ctx)
	if err != nil {
		return nil, fmt.Errorf("load sizes: %w", err)
	}
	for i := range own {
		own[i].Source = SourceWorkspace
	}
	return NewCatalog(Builtin(), Local(m), own), nil
}
