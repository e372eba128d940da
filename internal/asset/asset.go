package asset

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

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
	// Aliases says a reference may name a version by alias (name@champion): models, whose
	// aliases are MLflow's registered model aliases.
	Aliases bool
}

// Key is what Latest and Listing need to know of a version.
type Key struct {
	Name     string
	Version  string
	Archived bool
	// Created orders the versions of a name: @latest is the newest created (Azure's rule), not
	// the highest number.
	Created time.Time
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

// maxVersion keeps integer versions within what every store's integer column holds, with room
// for +1.
const maxVersion = 1<<53 - 1

// versionRE is a version as Azure writes them (1, 0.0.1, v2, 2024-01-05_rc1): letters, digits,
// '.', '_' and '-', starting with a letter or digit. It leaves out what a reference uses to
// separate a name from its version or label (':' and '@') and what a path would read ('/').
var versionRE = pattern.New(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$`)

// ParseVersion reads a version: Azure's versions are strings (0.0.1, v2), and integers are
// what a create without a version takes (the next one). A version of digits only is an integer
// and returned in its canonical form ("007" is "7"), so that azureml:x:007 names version 7.
// "latest" is refused: it is the label @latest.
func (k Kind) ParseVersion(s string) (string, error) {
	v := strings.TrimSpace(s)
	if n, ok := integer(v); ok {
		if n > maxVersion {
			return "", fmt.Errorf("version %q: an integer version is at most %d", s, maxVersion)
		}
		return strconv.FormatInt(n, 10), nil
	}
	switch {
	case strings.EqualFold(v, "latest"):
		return "", fmt.Errorf("version %q: latest is a label, not a version (name@latest names the newest %s)", s, k.Noun)
	case !versionRE.MatchString(v):
		return "", fmt.Errorf("version %q: expected letters, digits, '.', '_' and '-', starting with a letter or digit (at most 100), like 1 or 0.0.1", s)
	}
	return v, nil
}

// integer reads a version of digits only.
func integer(v string) (int64, bool) {
	if v == "" || strings.Trim(v, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return maxVersion + 1, true // too many digits: ParseVersion refuses it
	}
	return n, true
}

// Number is a version's integer value, or 0 for a version that is not an integer (0.0.1, v2).
func Number(v string) int64 {
	if n, ok := integer(v); ok && n <= maxVersion {
		return n
	}
	return 0
}

// Newer orders two versions of one name: the one created later, and for two created at the
// same instant the higher integer, then the greater string. Latest and Listing use it.
func Newer(a, b Key) bool {
	if !a.Created.Equal(b.Created) {
		return a.Created.After(b.Created)
	}
	if na, nb := Number(a.Version), Number(b.Version); na != nb {
		return na > nb
	}
	return a.Version > b.Version
}

// Latest returns the newest version that is not archived (Newer), or false.
func Latest[T Versioned](vs []T) (T, bool) {
	var best T
	found := false
	for _, v := range vs {
		k := v.AssetKey()
		if !k.Archived && (!found || Newer(k, best.AssetKey())) {
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
		return Newer(a, b)
	})
}
