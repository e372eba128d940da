package cli

import (
	"fmt"

	"github.com/hangar-ml/hangar/internal/snapshot"
)

// skipEscapingLinks leaves out of a download the symbolic links that would point outside the
// folder they are downloaded into (registered by a run before they were refused, or by a
// crafted manifest), with a warning for each: the rest of the download goes on, and nothing is
// written, or pointed at, outside dest.
func (e *Env) skipEscapingLinks(m *snapshot.Manifest, dest string) *snapshot.Manifest {
	kept, dropped := snapshot.WithoutEscapingLinks(m)
	for _, le := range dropped {
		fmt.Fprintf(e.Stderr, "warning: skipped %s -> %s: %s\n", le.Path, le.Target, le.Problem("download folder "+dest))
	}
	return kept
}
