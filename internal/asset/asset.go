package asset

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/hangar-ml/hangar/internal/pattern"
)

// Kind names one family of assets in messages and in Azure resource ids.
type Kind struct {
	// Noun is what messages call one asset: "model", "data asset".
	Noun string
	// Collection is the segment of an Azure resource id before the name: "models", "data".
	Collection string
	// Command is the CLI group that manages them: "model", "data".
	Command string
}

// Key is what Latest and Listing need to know of a version.
type Key struct {
	Name     string
	Version  string
	Archived bool
}

// Versioned is a registered version of some asset.
type Versioned interface{ AssetKey() Key }

var nameRE = pattern.New(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,254}$`)

// CheckName says what is wrong with an asset name, or returns nil.
func (k Kind) CheckName(name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("%q is not a %s name (letters, digits, _, . and -, starting with a letter or digit, at most 255)", name, k.Noun)
	}
	return nil
}

// maxVersion keeps versions within what every store's integer column holds, with room for +1.
const maxVersion = 1<<53 - 1

// ParseVersion reads a version: a positive integer, returned in its canonical form ("007" is
// "7"). Assets are numbered so that "the next version" and "@latest" mean one thing.
func (k Kind) ParseVersion(s string) (string, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n < 1 || n > maxVersion {
		return "", fmt.Errorf("version %q: expected a positive integer (%s versions are numbered 1, 2, 3...)", s, k.Noun)
	}
	return strconv.FormatInt(n, 10), nil
}

// Number is a version's integer value (0 for one that is not a number, which the store never holds).
func Number(v string) int64 {
	n, _ := strconv.ParseInt(v, 10, 64)
	return n
}

// Latest returns the highest version that is not archived, or false.
func Latest[T Versioned](vs []T) (T, bool) {
	var best T
	found := false
	for _, v := range vs {
		k := v.AssetKey()
		if !k.Archived && (!found || Number(k.Version) > Number(best.AssetKey().Version)) {
			best, found = v, true
		}
	}
	return best, found
}

// Listing picks what a list command shows: without name, the latest version of each asset (the
// latest archived one for an asset whose every version is archived, when includeArchived); with
// a name, every version of that asset, newest first. Archived versions are left out unless
// includeArchived. The result is sorted by name, then version descending.
func Listing[T Versioned](vs []T, name string, includeArchived bool) []T {
	var out []T
	if name != "" {
		for _, v := range vs {
			if k := v.AssetKey(); k.Name == name && (includeArchived || !k.Archived) {
				out = append(out, v)
			}
		}
		sortVersions(out)
		return out
	}
	byName := map[string][]T{}
	for _, v := range vs {
		byName[v.AssetKey().Name] = append(byName[v.AssetKey().Name], v)
	}
	for _, group := range byName {
		if v, ok := Latest(group); ok {
			out = append(out, v)
			continue
		}
		if includeArchived {
			sortVersions(group)
			out = append(out, group[0])
		}
	}
	sortVersions(out)
	return out
}

func sortVersions[T Versioned](vs []T) {
	sort.Slice(vs, func(i, j int) bool {
		a, b := vs[i].AssetKey(), vs[j].AssetKey()
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return Number(a.Version) > Number(b.Version)
	})
}
