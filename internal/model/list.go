package model

import "github.com/hangar-ml/hangar/internal/asset"

// AssetKey makes a model version an asset.Versioned, for Latest and Listing.
func (v Version) AssetKey() asset.Key {
	return asset.Key{Name: v.Name, Version: v.Version, Archived: v.Archived}
}

// Number is a version's integer value (0 for one that is not a number, which the store never holds).
func Number(v string) int64 { return asset.Number(v) }

// Latest returns the highest version that is not archived, or false.
func Latest(vs []Version) (Version, bool) { return asset.Latest(vs) }

// Listing picks what `model list` shows (asset.Listing).
func Listing(vs []Version, name string, includeArchived bool) []Version {
	return asset.Listing(vs, name, includeArchived)
}
