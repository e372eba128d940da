// Command hangar-sim replays a synthetic, seeded day of jobs through Hangar's scheduler and
// autoscaler and prints, as a Markdown table, what each scaling policy costs.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/hangar-ml/hangar/internal/sim"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "hangar-sim:", err)
		os.Exit(2)
	}
}

// run parses flags, simulates and writes the table to out.
func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("hangar-sim", flag.ContinueOnError)
	seed := fs.Uint64("seed", 1, "seed of the synthetic trace and the simulated provider")
	tick := fs.Duration("tick", 5*time.Second, "simulated time between scheduler and autoscaler passes")
	fixedIdle := fs.Duration("fixed-idle", 10*time.Minute, "idle time of the fixed-idle comparison policy")
	checkpoints := fs.String("checkpoints", "", "instead: work lost to preemption without checkpoints and with each of these intervals (comma-separated, e.g. 1m,5m,15m)")
	preempt := fs.Float64("preempt-per-hour", 0, "chance per node-hour that a low_priority node is preempted (0: the scenario's)")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("parse flags: %w", err)
	}
	if *tick <= 0 {
		return fmt.Errorf("parse flags: -tick must be positive, got %s", *tick)
	}
	cfg := sim.DefaultConfig(*seed)
	cfg.Tick = *tick
	if *preempt > 0 {
		cfg.PreemptPerHour = *preempt
	}
	jobs := sim.GenerateTrace(cfg.Seed, cfg.Trace)
	fmt.Fprintf(out, "Seed %d: %d jobs over %s, tick %s, clusters cpu (≤%d × 16 cores, dedicated) and gpu (≤%d × 4 GPUs, low_priority).\n\n",
		cfg.Seed, len(jobs), cfg.Trace.Length, cfg.Tick, cfg.Pools[0].Max, cfg.Pools[1].Max)
	if *checkpoints != "" {
		var every []time.Duration
		for _, f := range strings.Split(*checkpoints, ",") {
			d, err := time.ParseDuration(strings.TrimSpace(f))
			if err != nil || d <= 0 {
				return fmt.Errorf("parse flags: -checkpoints: %q is not a positive duration", f)
			}
			every = append(every, d)
		}
		fmt.Fprintf(out, "Preemptions: %.2f per low_priority node-hour.\n\n", cfg.PreemptPerHour)
		fmt.Fprint(out, sim.CheckpointMarkdown(sim.CheckpointComparison(cfg, every)))
		return nil
	}
	fmt.Fprint(out, sim.Markdown(sim.Compare(cfg, sim.Hangar(), sim.FixedIdle(*fixedIdle))))
	return nil
}
