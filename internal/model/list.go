package model

import "github.com/hangar-ml/hangar/internal/asset"

// AssetKey makes a model version an asset.Versioned, for Latest and Listing.
func (v Version) AssetKey() asset.Key {
	return asset.Key{Name: v.Name, Version: v.Version, Archived: v.Archived, Created: v.CreatedAt}
}

// Number is a version's integer value (0 for one that is not an integer: 0.0.1, v2).
func Number(v string) int64 { return asset.Number(v) }

// Latest returns the newest version that is not archived (asset.Newer), or false.
func Latest(vs []Version) (Version, bool) { return asset.Latest(vs) }

// Listing picks what `model list` shows (asset.Listing).
func Listing(vs []Version, name string, includeArchived bool) []Version {
	return asset.Listing(vs, name, includeArchived)
}
