package nodecmd

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/cli"
	"github.com/hangar-ml/hangar/internal/supervisor"
)

func newSuperviseCmd(env *cli.Env) *cobra.Command {
	var config string
	cmd := &cobra.Command{
		Use:   "supervise",
		Short: "Run one run's supervisor (started by backends, not by hand)",
		Long: `Run the supervisor of one run on this node: fetch its code and inputs, make its environment
ready, run its command, ship logs and metrics, collect outputs and report to the workspace.
Backends and agents start it detached, with the config file they wrote in the run's directory.`,
		Example: "  hangar supervise --config ~/.hangar/local/runs/plucky_otter_k3x9q2mz/supervisor.json",
		Hidden:  true,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			log := slog.New(slog.NewTextHandler(os.Stderr, nil)).With("component", "supervisor")
			return RunSupervisor(cmd.Context(), config, log)
		},
	}
	cmd.Flags().StringVar(&config, "config", "", "supervisor config file")
	_ = cmd.MarkFlagRequired("config")
	return cmd
}

// RunSupervisor runs a supervisor from its config file. SIGTERM and SIGINT cancel the run (its
// outputs and logs are still collected); they do not stop the supervisor itself.
func RunSupervisor(ctx context.Context, path string, log *slog.Logger) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read supervisor config: %w", err)
	}
	var cfg api.SupervisorConfig
	if err := json.Unmarshal(b, &cfg); err != nil {
		return fmt.Errorf("read supervisor config %s: %w", path, err)
	}
	log = log.With("run", cfg.RunID)
	s, err := supervisor.New(cfg, log)
	if err != nil {
		return err
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer signal.Stop(sigs)
	go func() {
		for sig := range sigs {
			if sig == syscall.SIGHUP {
				continue // the session went away; the run goes on
			}
			log.Info("cancel signal", "signal", sig.String())
			s.OnSignal(context.Background())
		}
	}()
	return s.Run(context.WithoutCancel(ctx))
}
