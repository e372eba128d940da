package api

import (
	"math"
	"strings"
)

// RunData is one of a run's inputs or outputs in an object store (docs/data.md, "Use
// object-store data in a job"): where it lies, and what the run's node moved. job show lists
// them; the server never sees the objects themselves.
type RunData struct {
	// Name is the input's or output's name; Kind is "input" or "output".
	Name string `json:"name"`
	Kind string `json:"kind"`
	// URI is the store's own URI of the data (an output's with the run's name in place of
	// ${{name}}); Datastore the datastore whose credentials the node used ("": its own identity).
	URI       string `json:"uri"`
	Datastore string `json:"datastore,omitempty"`
	Mode      string `json:"mode,omitempty"`
	// Moved is what the node fetched (an input) or wrote (an output), once it did; nil before.
	Moved *DataMoved `json:"moved,omitempty"`
}

// DataMoved counts the objects and bytes of an input fetched, or an output written, by the run's
// node, and of an input's how many its node's cache held (those crossed no network).
type DataMoved struct {
	Objects       int64 `json:"objects"`
	Bytes         int64 `json:"bytes"`
	CachedObjects int64 `json:"cached_objects,omitempty"`
	CachedBytes   int64 `json:"cached_bytes,omitempty"`
}

// The supervisor reports what it moved of each input and output in object stores with the
// run's status reports, as numbers the server adds to the run's timings under these keys:
// data.<inputs|outputs>.<name>.<objects|bytes|cached_objects|cached_bytes>. They are not
// durations: job show reads them back as RunData (DataMovedOf), not as phases.
const dataTimingPrefix = "data."

// DataTimings are the timings keys and values that report m for input or output name (kind
// "inputs" or "outputs").
func DataTimings(kind, name string, m DataMoved) map[string]float64 {
	k := dataTimingPrefix + kind + "." + name + "."
	out := map[string]float64{k + "objects": float64(m.Objects), k + "bytes": float64(m.Bytes)}
	if kind == "inputs" {
		out[k+"cached_objects"], out[k+"cached_bytes"] = float64(m.CachedObjects), float64(m.CachedBytes)
	}
	return out
}

// IsDataTiming reports whether a timings key is a DataTimings one (a count, not a duration).
func IsDataTiming(key string) bool { return strings.HasPrefix(key, dataTimingPrefix) }

// DataMovedOf reads back, from a run's timings, what was reported for input or output name
// (kind "inputs" or "outputs"); nil when nothing was.
func DataMovedOf(timings map[string]float64, kind, name string) *DataMoved {
	k := dataTimingPrefix + kind + "." + name + "."
	objects, ok := timings[k+"objects"]
	if !ok {
		return nil
	}
	n := func(v float64) int64 { return int64(math.Round(v)) }
	return &DataMoved{Objects: n(objects), Bytes: n(timings[k+"bytes"]),
		CachedObjects: n(timings[k+"cached_objects"]), CachedBytes: n(timings[k+"cached_bytes"])}
}
