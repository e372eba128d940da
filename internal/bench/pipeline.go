package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// chainStep is step i of a chain of short steps, each copying the file the step before wrote
// and adding a line (step 0 writes the first).
func chainStep(i int) string {
	if i == 0 {
		return "echo 0 > ${{outputs.o}}/f"
	}
	return fmt.Sprintf("cat ${{inputs.x}}/f > ${{outputs.o}}/f; echo %d >> ${{outputs.o}}/f", i)
}

// chainYAML is a pipeline of steps short steps in a chain, on the local target.
func chainYAML(steps int) string {
	var b strings.Builder
	b.WriteString("type: pipeline\nsettings:\n  default_compute: local\njobs:\n")
	for i := 0; i < steps; i++ {
		fmt.Fprintf(&b, "  s%d:\n    command: %s\n    outputs:\n      o: {type: uri_folder}\n", i, chainStep(i))
		if i > 0 {
			fmt.Fprintf(&b, "    inputs:\n      x: ${{parent.jobs.s%d.outputs.o}}\n", i-1)
		}
	}
	return b.String()
}

// handStep is step i of the same chain as a command job of its own reading the job before's
// output (azureml://jobs/<job>/outputs/o).
func handStep(i int, prev string) string {
	y := fmt.Sprintf("command: %s\ncompute: local\noutputs:\n  o: {type: uri_folder}\n", chainStep(i))
	if i > 0 {
		y += fmt.Sprintf("inputs:\n  x: {type: uri_folder, path: azureml://jobs/%s/outputs/o}\n", prev)
	}
	return y
}

// Pipeline compares, n times interleaved on a warm server, a chain of steps short steps run by
// hand one after another (`job create --stream` of each, each reading the output of the one
// before) with the same chain as one pipeline (`job create --stream`, force_rerun so that no
// step is reused), and times a fully cached rerun of the pipeline.
func Pipeline(ctx context.Context, w *Workspace, dir string, steps, n int) ([]Row, error) {
	chain := filepath.Join(dir, "chain.yml")
	if err := os.WriteFile(chain, []byte(chainYAML(steps)), 0o644); err != nil {
		return nil, err
	}
	if _, err := w.Run(ctx, "job", "create", "-f", chain, "--stream"); err != nil { // warm up, and fill the cache
		return nil, err
	}
	var hand, pipe, cached []time.Duration
	for rep := 0; rep < n; rep++ {
		if err := timeInto(&hand, func() error { return byHand(ctx, w, dir, steps, rep) }); err != nil {
			return nil, err
		}
		err := timeInto(&pipe, func() error {
			_, err := w.Run(ctx, "job", "create", "-f", chain, "--stream", "--set", "settings.force_rerun=true")
			return err
		})
		if err != nil {
			return nil, err
		}
		err = timeInto(&cached, func() error { _, err := w.Run(ctx, "job", "create", "-f", chain, "--stream"); return err })
		if err != nil {
			return nil, err
		}
	}
	h := baselineRow(fmt.Sprintf("%d steps by hand, one `job create --stream` after another", steps), hand)
	return []Row{h, h.against(fmt.Sprintf("the same %d steps as one pipeline (`force_rerun`)", steps), pipe),
		h.against("the pipeline again, every step reused from the cache", cached)}, nil
}

// byHand runs the chain as command jobs, each waiting for the one before.
func byHand(ctx context.Context, w *Workspace, dir string, steps, rep int) error {
	prev := ""
	for i := 0; i < steps; i++ {
		name := fmt.Sprintf("hand%d_%d", rep, i)
		file := filepath.Join(dir, name+".yml")
		if err := os.WriteFile(file, []byte(handStep(i, prev)), 0o644); err != nil {
			return err
		}
		if _, err := w.Run(ctx, "job", "create", "-f", file, "--name", name, "--stream"); err != nil {
			return err
		}
		prev = name
	}
	return nil
}
