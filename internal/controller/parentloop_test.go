package controller

import "github.com/hangar-ml/hangar/internal/controller/parents"

// parents is the parent loop over the fixture's controller and store, with its engines.
func (f *fixture) parents() *parents.Loop {
	return parents.New(parents.Config{Runs: f.c, Resolver: f.c.Parents, Store: f.c.Store.Parents, Reader: f.c.Store.Runs,
		Log: f.c.Log, Now: f.clock.Now, SweepDecide: f.sweepDecide, PipelineDecide: f.pipelineDecide})
}
