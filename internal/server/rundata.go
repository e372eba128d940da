package server

import (
	"maps"
	"slices"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
)

// runDataOf lists a run's inputs and outputs in object stores for job show: where each lies (an
// output's location with the run's name in its path) and what the node reported it moved
// (api.DataTimings). Inputs first, each sorted by name.
func runDataOf(r *job.Run) []api.RunData {
	var out []api.RunData
	for _, name := range slices.Sorted(maps.Keys(r.Spec.Inputs)) {
		in := r.Spec.Inputs[name]
		if in.Store == nil {
			continue
		}
		out = append(out, api.RunData{Name: name, Kind: "input", URI: in.Store.URI(), Datastore: in.Store.Datastore,
			Mode: in.Mode, Moved: api.DataMovedOf(r.Timings, "inputs", name)})
	}
	for _, name := range slices.Sorted(maps.Keys(r.Spec.Outputs)) {
		o := r.Spec.Outputs[name]
		if o.Store == nil {
			continue
		}
		at := o.Store.ForRun(r.ID)
		out = append(out, api.RunData{Name: name, Kind: "output", URI: at.URI(), Datastore: at.Datastore,
			Mode: o.Mode, Moved: api.DataMovedOf(r.Timings, "outputs", name)})
	}
	return out
}
