package snapshot

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

var (
	errEscapes = errors.New("symlink target leaves the tree")
	errLoop    = errors.New("too many levels of symlinks")
)

// maxHops is how many symlinks one resolution may follow, as Linux allows.
const maxHops = 40

// LinkError is a symbolic link of a tree whose target, followed as the OS would through the
// tree's other links, leaves the tree, or never ends (a loop).
type LinkError struct {
	Path   string // slash-separated, relative to the tree's root
	Target string // as os.Readlink reads it
	Loop   bool
	// AbsoluteInside marks an absolute target that names a place inside the scanned folder:
	// it would not be inside once the tree is materialized somewhere else.
	AbsoluteInside bool
}

func (e *LinkError) Error() string {
	return fmt.Sprintf("%s -> %s: %s", e.Path, e.Target, e.Problem("folder"))
}

// Problem says what is wrong with the link, calling the tree's root folder.
func (e *LinkError) Problem(folder string) string {
	switch {
	case e.Loop:
		return "a symbolic link loop"
	case e.AbsoluteInside:
		return "a symbolic link with an absolute target; make it relative (ln -sr) so that it stays inside the " + folder
	}
	return "a symbolic link that points outside the " + folder
}

// checkSymlinks refuses symlinks whose target leaves the tree (see badLink).
func checkSymlinks(es []Entry) error {
	le := badLink(es)
	if le == nil {
		return nil
	}
	reason := errEscapes
	if le.Loop {
		reason = errLoop
	}
	return fmt.Errorf("%w: %q -> %q: %w", ErrInvalid, le.Path, le.Target, reason)
}

// badLink returns the first symlink (in the order of es) whose target leaves the tree,
// resolving the target as the OS would: ".." after a symlink climbs from where that symlink
// points, not from where it sits. Targets through paths the manifest does not hold are taken
// as plain directory names.
func badLink(es []Entry) *LinkError {
	links := linkTargets(es)
	for _, e := range es {
		if le := linkProblem(links, e); le != nil {
			return le
		}
	}
	return nil
}

// linkTargets maps each symlink of es to its target.
func linkTargets(es []Entry) map[string]string {
	links := make(map[string]string)
	for _, e := range es {
		if e.Type == TypeSymlink {
			links[e.Path] = e.Target
		}
	}
	return links
}

// linkProblem says why e, a symlink among links, leaves the tree (nil when it is no symlink, or
// stays inside).
func linkProblem(links map[string]string, e Entry) *LinkError {
	if e.Type != TypeSymlink {
		return nil
	}
	var dir []string
	if d := path.Dir(e.Path); d != "." {
		dir = strings.Split(d, "/")
	}
	hops := 0
	if _, err := resolve(links, dir, e.Target, &hops); err != nil {
		return &LinkError{Path: e.Path, Target: e.Target, Loop: errors.Is(err, errLoop)}
	}
	return nil
}

// resolve follows target from the directory cur and returns where it ends.
func resolve(links map[string]string, cur []string, target string, hops *int) ([]string, error) {
	if absTarget(target) {
		return nil, errEscapes
	}
	cur = slices.Clip(cur)
	for _, c := range strings.Split(target, "/") {
		switch c {
		case "", ".":
		case "..":
			if len(cur) == 0 {
				return nil, errEscapes
			}
			cur = cur[:len(cur)-1]
		default:
			cur = append(slices.Clip(cur), c)
			t, ok := links[strings.Join(cur, "/")]
			if !ok {
				continue
			}
			if *hops++; *hops > maxHops {
				return nil, errLoop
			}
			var err error
			if cur, err = resolve(links, cur[:len(cur)-1], t, hops); err != nil {
				return nil, err
			}
		}
	}
	return cur, nil
}

func absTarget(t string) bool {
	if strings.HasPrefix(t, "/") || filepath.IsAbs(t) || filepath.VolumeName(t) != "" {
		return true
	}
	return runtime.GOOS == "windows" && strings.ContainsAny(t, `\:`)
}
