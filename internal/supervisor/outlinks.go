package supervisor

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/hangar-ml/hangar/internal/snapshot"
)

// keepInside leaves out of m the symbolic links that point outside it (the tree the run's files
// are downloaded as: the artifacts, or one named output), and warns on the run for each, naming
// it. Such a link is never followed: what it points at (the node's own files) is not read, let
// alone uploaded. Before, one such link was registered and then failed every download of the
// run, its logs included.
func (s *outputCollector) keepInside(m *snapshot.Manifest, tree string) *snapshot.Manifest {
	kept, dropped := snapshot.WithoutEscapingLinks(m)
	for _, le := range dropped {
		s.warn(s.linkWarning(le, tree))
	}
	return kept
}

// linkWarning says which link of tree was left out, and why.
func (s *outputCollector) linkWarning(le *snapshot.LinkError, tree string) string {
	c := *le
	c.AbsoluteInside = !c.Loop && filepath.IsAbs(c.Target) && within(s.cfg.Dir, c.Target)
	prefix, folder := "", "run's artifacts"
	if tree != "" {
		prefix, folder = "output "+tree+": ", "output"
	}
	return fmt.Sprintf("%s%s -> %s: %s; it was not collected (nor what it points at)", prefix, c.Path, c.Target, c.Problem(folder))
}

// within reports whether the absolute path p is dir or below it.
func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, filepath.Clean(p))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
