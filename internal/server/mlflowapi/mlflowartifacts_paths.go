package mlflowapi

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/hangar-ml/hangar/internal/snapshot"
	"github.com/hangar-ml/hangar/internal/store"
	"github.com/hangar-ml/hangar/internal/tracking"
)

// mlflowArtifactURI is the artifact_uri of a run (what runs/get answers): MLflow clients
// resolve it against the tracking URI to <server>/api/2.0/mlflow-artifacts/artifacts/<experiment
// id>/<run id>/artifacts and send uploads, listings and downloads there.
func mlflowArtifactURI(experimentID, runID string) string {
	return tracking.ArtifactURI(experimentID, runID)
}

// MaxArtifactPath bounds an artifact path (MLflow sets no limit; file systems take 4096 bytes).
const MaxArtifactPath = 4096

// artifactPath is `<experiment id>/<run id>/artifacts[/<rel>]`, the path of a proxied artifact.
// The experiment segment is kept as the client sent it: artifacts are stored by run (a run has
// one experiment), so it selects nothing.
type artifactPath struct {
	experiment, run, rel string // rel "" is the run's artifact root
	model                string // a logged model's id (run ""): <experiment id>/models/<id>/artifacts[/<rel>]
}

// parseArtifactPath checks a path that arrived in a URL or a query: it is data, so anything
// that could name another place than the one it spells (`..`, `.`, empty segments, a leading
// slash, backslashes that a Windows client may mean as separators, NUL and control bytes,
// invalid UTF-8) is refused rather than cleaned.
func parseArtifactPath(p string) (artifactPath, error) {
	if err := checkArtifactPath(p); err != nil {
		return artifactPath{}, err
	}
	if a, ok := parseModelArtifactPath(p); ok {
		return a, nil
	}
	parts := strings.SplitN(p, "/", 4)
	if len(parts) < 3 || parts[2] != "artifacts" {
		return artifactPath{}, mlflowInvalid(fmt.Sprintf("artifact path %q: want <experiment_id>/<run_id>/artifacts[/<path>]", p))
	}
	a := artifactPath{experiment: parts[0], run: parts[1]}
	if len(parts) == 4 {
		a.rel = parts[3]
	}
	return a, nil
}

// checkArtifactPath refuses what parseArtifactPath's comment lists.
func checkArtifactPath(p string) error {
	bad := func(why string) error { return mlflowInvalid(fmt.Sprintf("artifact path %q: %s", p, why)) }
	switch {
	case p == "":
		return bad("empty")
	case len(p) > MaxArtifactPath:
		return mlflowInvalid(fmt.Sprintf("artifact path of %d bytes: at most %d", len(p), MaxArtifactPath))
	case !utf8.ValidString(p):
		return bad("not UTF-8 text")
	case strings.HasPrefix(p, "/"):
		return bad("absolute")
	case strings.Contains(p, `\`):
		return bad("holds a backslash; separate with /")
	case strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return bad("holds a control character")
	}
	for seg := range strings.SplitSeq(p, "/") {
		switch seg {
		case "":
			return bad("has an empty segment")
		case ".", "..":
			return bad("has a " + seg + " segment")
		}
	}
	return nil
}

// jobTree is a job's own artifacts (the manifest its supervisor registered: outputs/, logs/,
// user_logs/), seen through the proxy read-only. Its entries win over uploaded files of the
// same name.
type jobTree struct{ m *snapshot.Manifest }

// entry returns the manifest entry at p.
func (t jobTree) entry(p string) (snapshot.Entry, bool) {
	if t.m == nil {
		return snapshot.Entry{}, false
	}
	i, ok := slices.BinarySearchFunc(t.m.Entries, p, func(e snapshot.Entry, p string) int { return strings.Compare(e.Path, p) })
	if !ok {
		return snapshot.Entry{}, false
	}
	return t.m.Entries[i], true
}

// owns says whether writing or deleting p would touch the job's artifacts: p is one of them,
// lies below one of its files, or is a directory holding some (rel "" holds them all).
func (t jobTree) owns(p string) (string, bool) {
	if t.m == nil || len(t.m.Entries) == 0 {
		return "", false
	}
	if p == "" {
		return t.m.Entries[0].Path, true
	}
	if _, ok := t.entry(p); ok {
		return p, true
	}
	for d := path.Dir(p); d != "."; d = path.Dir(d) {
		if e, ok := t.entry(d); ok && e.Type != snapshot.TypeDir {
			return d, true
		}
	}
	i, _ := slices.BinarySearchFunc(t.m.Entries, p+"/", func(e snapshot.Entry, p string) int { return strings.Compare(e.Path, p) })
	if i < len(t.m.Entries) && strings.HasPrefix(t.m.Entries[i].Path, p+"/") {
		return t.m.Entries[i].Path, true
	}
	return "", false
}

// children returns the directory dir's children in the job's tree, in key order. Symlinks are
// left out: what they point to is listed where it is.
func (t jobTree) children(dir string) []store.ArtifactEntry {
	if t.m == nil {
		return nil
	}
	prefix := ""
	if dir != "" {
		prefix = dir + "/"
	}
	seen := map[string]bool{}
	var out []store.ArtifactEntry
	i, _ := slices.BinarySearchFunc(t.m.Entries, prefix, func(e snapshot.Entry, p string) int { return strings.Compare(e.Path, p) })
	for _, e := range t.m.Entries[i:] {
		if !strings.HasPrefix(e.Path, prefix) {
			break
		}
		rest := e.Path[len(prefix):]
		c := store.ArtifactEntry{Name: rest, IsDir: e.Type == snapshot.TypeDir, Size: e.Size}
		if j := strings.IndexByte(rest, '/'); j >= 0 {
			c = store.ArtifactEntry{Name: rest[:j], IsDir: true}
		}
		if (e.Type == snapshot.TypeSymlink && !c.IsDir) || seen[c.Name] {
			continue
		}
		seen[c.Name] = true
		out = append(out, c)
	}
	sortEntries(out)
	return out
}

func sortEntries(es []store.ArtifactEntry) {
	slices.SortFunc(es, func(a, b store.ArtifactEntry) int { return strings.Compare(a.Key(), b.Key()) })
}

// mergeChildren puts a directory's job entries and uploaded entries together in key order,
// after the key after, at most limit of them (more reports whether some were left out). A
// name the job has hides an uploaded one.
func mergeChildren(job, uploaded []store.ArtifactEntry, after string, limit int) (out []store.ArtifactEntry, more bool) {
	names := map[string]bool{}
	for _, e := range job {
		names[e.Name] = true
	}
	all := make([]store.ArtifactEntry, 0, len(job)+len(uploaded))
	for _, e := range job {
		if e.Key() > after {
			all = append(all, e)
		}
	}
	for _, e := range uploaded {
		if !names[e.Name] && e.Key() > after {
			all = append(all, e)
		}
	}
	sortEntries(all)
	if len(all) > limit {
		return all[:limit], true
	}
	return all, false
}
