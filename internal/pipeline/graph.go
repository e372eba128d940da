package pipeline

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/hangar-ml/hangar/internal/job"
)

// Check verifies the graph Decide, Order and Draw rely on, naming the field at fault: every
// step an input reads from exists and declares that output, so does every pipeline output's
// producer, and no step depends on itself through others ("jobs: a cycle: prep → train →
// prep"). The spec decoder checks the YAML itself; this is the planner's own contract.
func Check(p job.PipelineRun) error {
	if len(p.Steps) == 0 {
		return fmt.Errorf("jobs: a pipeline needs at least one step")
	}
	for _, name := range stepNames(p) {
		step := p.Steps[name]
		for _, in := range slices.Sorted(maps.Keys(step.From)) {
			if err := checkRef(p, step.From[in]); err != nil {
				return fmt.Errorf("jobs.%s.inputs.%s: %w", name, in, err)
			}
		}
	}
	for _, out := range slices.Sorted(maps.Keys(p.Outputs)) {
		if err := checkRef(p, p.Outputs[out]); err != nil {
			return fmt.Errorf("outputs.%s: %w", out, err)
		}
	}
	if cycle := findCycle(Deps(p)); cycle != nil {
		return fmt.Errorf("jobs: a cycle: %s", strings.Join(cycle, " → "))
	}
	return nil
}

// checkRef says why ref does not name a declared output of an existing step.
func checkRef(p job.PipelineRun, ref job.StepRef) error {
	if ref.Step == "" {
		return fmt.Errorf("no step named (expected ${{parent.jobs.<step>.outputs.<output>}})")
	}
	producer, ok := p.Steps[ref.Step]
	if !ok {
		return fmt.Errorf("step %q does not exist (steps: %s)", ref.Step, strings.Join(stepNames(p), ", "))
	}
	if _, ok := producer.Spec.Outputs[ref.Output]; !ok {
		declared := slices.Sorted(maps.Keys(producer.Spec.Outputs))
		if len(declared) == 0 {
			return fmt.Errorf("step %q declares no outputs, so it has no output %q", ref.Step, ref.Output)
		}
		return fmt.Errorf("step %q has no output %q (outputs: %s)", ref.Step, ref.Output, strings.Join(declared, ", "))
	}
	return nil
}

// Deps returns, for every step, the sorted names of the steps it reads from (its producers).
// A reference to a step that does not exist is left out: Check reports it.
func Deps(p job.PipelineRun) map[string][]string {
	deps := make(map[string][]string, len(p.Steps))
	for name, step := range p.Steps {
		var producers []string
		for _, ref := range step.From {
			if _, ok := p.Steps[ref.Step]; ok && !slices.Contains(producers, ref.Step) {
				producers = append(producers, ref.Step)
			}
		}
		sort.Strings(producers)
		deps[name] = producers
	}
	return deps
}

// Order returns every step once, producers before the steps that read them: by layer (a step's
// layer is one more than its deepest producer's), then by name, so the same graph always reads
// the same way. Steps a cycle holds back (which Check refuses) come last, by name.
func Order(p job.PipelineRun) []string {
	layers := Layers(p)
	var order []string
	for _, layer := range layers {
		order = append(order, layer...)
	}
	return order
}

// Layers groups the steps by layer: layer 0 reads from no step, layer n reads from at least
// one step of layer n-1 and none later. Each layer is sorted by name. The steps a cycle holds
// back (a graph Check refuses) form one last layer, so every step is still listed.
func Layers(p job.PipelineRun) [][]string {
	deps := Deps(p)
	names := slices.Sorted(maps.Keys(deps))
	depth := make(map[string]int, len(deps))
	var layers [][]string
	for placed := 0; placed < len(deps); {
		var layer []string
		for _, name := range names {
			if _, done := depth[name]; done {
				continue
			}
			if allIn(deps[name], depth) {
				layer = append(layer, name)
			}
		}
		if len(layer) == 0 { // only a cycle is left
			for _, name := range names {
				if _, done := depth[name]; !done {
					layer = append(layer, name)
				}
			}
		}
		for _, name := range layer {
			depth[name] = len(layers)
		}
		layers = append(layers, layer)
		placed += len(layer)
	}
	return layers
}

func allIn(names []string, placed map[string]int) bool {
	for _, n := range names {
		if _, ok := placed[n]; !ok {
			return false
		}
	}
	return true
}

// findCycle returns one cycle as a path that ends where it starts, or nil. It walks the steps
// in name order so the cycle named is always the same one.
func findCycle(deps map[string][]string) []string {
	const (
		unseen = iota
		onPath
		finished
	)
	mark := make(map[string]int, len(deps))
	var path []string
	var visit func(string) []string
	visit = func(n string) []string {
		mark[n] = onPath
		path = append(path, n)
		for _, producer := range deps[n] {
			switch mark[producer] {
			case onPath:
				i := slices.Index(path, producer)
				cycle := append(slices.Clone(path[i:]), producer)
				// path runs consumer → producer; a cycle reads best in data-flow order.
				slices.Reverse(cycle)
				return rotateToMin(cycle)
			case unseen:
				if c := visit(producer); c != nil {
					return c
				}
			}
		}
		path = path[:len(path)-1]
		mark[n] = finished
		return nil
	}
	for _, n := range slices.Sorted(maps.Keys(deps)) {
		if mark[n] == unseen {
			if c := visit(n); c != nil {
				return c
			}
		}
	}
	return nil
}

// rotateToMin starts a closed cycle (first == last) at its smallest name, so a cycle reads the
// same whichever step the walk entered it by.
func rotateToMin(cycle []string) []string {
	ring := cycle[:len(cycle)-1]
	i := slices.Index(ring, slices.Min(ring))
	out := append(slices.Clone(ring[i:]), ring[:i]...)
	return append(out, out[0])
}

func stepNames(p job.PipelineRun) []string { return slices.Sorted(maps.Keys(p.Steps)) }
