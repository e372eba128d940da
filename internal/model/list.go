package model

import (
	"sort"
	"strconv"
)

// Number is a version's integer value (0 for one that is not a number, which the store never holds).
func Number(v string) int64 {
	n, _ := strconv.ParseInt(v, 10, 64)
	return n
}

// Latest returns the highest version that is not archived, or false.
func Latest(vs []Version) (Version, bool) {
	var best Version
	found := false
	for _, v := range vs {
		if !v.Archived && (!found || Number(v.Version) > Number(best.Version)) {
			best, found = v, true
		}
	}
	return best, found
}

// Listing picks what `model list` shows: without name, the latest version of each model (the
// latest archived one for a model whose every version is archived, when includeArchived); with
// a name, every version of that model, newest first. Archived versions are left out unless
// includeArchived. The result is sorted by name, then version descending.
func Listing(vs []Version, name string, includeArchived bool) []Version {
	var out []Version
	if name != "" {
		for _, v := range vs {
			if v.Name == name && (includeArchived || !v.Archived) {
				out = append(out, v)
			}
		}
		sortVersions(out)
		return out
	}
	byName := map[string][]Version{}
	for _, v := range vs {
		byName[v.Name] = append(byName[v.Name], v)
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

func sortVersions(vs []Version) {
	sort.Slice(vs, func(i, j int) bool {
		if vs[i].Name != vs[j].Name {
			return vs[i].Name < vs[j].Name
		}
		return Number(vs[i].Version) > Number(vs[j].Version)
	})
}
