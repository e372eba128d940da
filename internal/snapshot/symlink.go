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

// checkSymlinks refuses symlinks whose target leaves the tree, resolving
// the target as the OS would: ".." after a symlink climbs from where that
// symlink points, not from where it sits. Targets through paths the
// manifest does not hold are taken as plain directory names.
func checkSymlinks(es []Entry) error {
	links := make(map[string]string)
	for _, e := range es {
		if e.Type == TypeSymlink {
			links[e.Path] = e.Target
		}
	}
	for _, e := range es {
		if e.Type != TypeSymlink {
			continue
		}
		var dir []string
		if d := path.Dir(e.Path); d != "." {
			dir = strings.Split(d, "/")
		}
		hops := 0
		if _, err := resolve(links, dir, e.Target, &hops); err != nil {
			return fmt.Errorf("%w: %q -> %q: %w", ErrInvalid, e.Path, e.Target, err)
		}
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
