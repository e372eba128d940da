package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/hangar-ml/hangar/internal/home"
)

func newServerCmd(env *Env) *cobra.Command {
	var o ServeOptions
	var logs logFlags
	cmd := &cobra.Command{
		Use:   "server",
		Short: "Run the workspace server in the foreground",
		Long: `Run the workspace server: the HTTP API, the store (SQLite in the workspace directory),
the blob store and the controller that runs jobs. The CLI starts one in the background
for the local workspace when needed, so you rarely run this yourself.`,
		Example: `  hangar server                       # serve ~/.hangar (or $HANGAR_HOME)
  hangar server --home /srv/hangar --listen 0.0.0.0:8700
  hangar server stop                  # stop the local workspace's server`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Home == "" {
				h, err := home.Default()
				if err != nil {
					return err
				}
				o.Home = h.Dir
			}
			log, err := logs.logger(env.Stderr)
			if err != nil {
				return err
			}
			o.Log = log
			return env.deps.Serve(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.Home, "home", "", "workspace directory (default $HANGAR_HOME or ~/.hangar)")
	cmd.Flags().StringVar(&o.Listen, "listen", "", "address to listen on (default: the last one used, else a free 127.0.0.1 port)")
	logs.register(cmd.Flags())
	cmd.Flags().DurationVar(&o.Controller.CancelGrace, "cancel-grace", 10*time.Second, "time a canceled run's processes get between SIGTERM and SIGKILL")
	cmd.Flags().DurationVar(&o.Controller.Heartbeat, "heartbeat", 5*time.Second, "how often run supervisors report")
	cmd.Flags().DurationVar(&o.Controller.StaleAfter, "stale-after", 15*time.Second, "silence after which a run's backend is asked about it")
	cmd.Flags().DurationVar(&o.Controller.NotRespondingAfter, "not-responding-after", time.Minute, "silence after which a run is NotResponding")
	cmd.Flags().DurationVar(&o.Controller.LostAfter, "lost-after", 15*time.Minute, "unreachability after which a run fails")
	cmd.Flags().DurationVar(&o.Controller.UnreachableLimit, "unreachable-limit", 15*time.Minute,
		"how long a queued run waits for a target that does not answer (refused connection, SSH handshake timeout) before it fails")
	cmd.Flags().DurationVar(&o.Controller.TokenTTL, "run-token-ttl", 7*24*time.Hour, "how long a run token is valid (heartbeats renew a live run's token)")
	cmd.Flags().DurationVar(&o.Controller.TokenGrace, "run-token-grace", 2*time.Minute, "how long a run's token still works after the run ended (late retries)")
	cmd.Flags().DurationVar(&o.Controller.NodeOutputsWait, "node-outputs-wait", 10*time.Minute, "how long a multi-node run's artifacts wait for the other nodes' logs and outputs")
	cmd.AddCommand(newServerStopCmd(env), newServerStatusCmd(env))
	return cmd
}

func newServerStopCmd(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:     "stop",
		Short:   "Stop the local workspace's server (runs keep going and report when it is back)",
		Example: `  hangar server stop`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := home.Default()
			if err != nil {
				return err
			}
			stopped, err := h.Stop(cmd.Context(), 10*time.Second)
			if err != nil {
				return err
			}
			if stopped {
				fmt.Fprintf(env.Stderr, "Stopped the server of %s\n", h.Dir)
			} else {
				fmt.Fprintf(env.Stderr, "No server is running for %s\n", h.Dir)
			}
			return nil
		},
	}
}

func newServerStatusCmd(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:     "status",
		Short:   "Say whether the local workspace's server runs, and where",
		Example: `  hangar server status`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := home.Default()
			if err != nil {
				return err
			}
			si, err := h.Running(cmd.Context())
			if err != nil {
				fmt.Fprintf(env.Stdout, "not running (%s)\n", h.Dir)
				return &ExitError{Code: ExitFailure}
			}
			fmt.Fprintf(env.Stdout, "running: %s pid %d (%s)\n", si.URL, si.PID, h.Dir)
			return nil
		},
	}
}
