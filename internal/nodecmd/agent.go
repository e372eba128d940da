package nodecmd

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/hangar-ml/hangar/internal/api"

	"github.com/spf13/cobra"

	"github.com/hangar-ml/hangar/internal/agent"
	"github.com/hangar-ml/hangar/internal/cli"
	"github.com/hangar-ml/hangar/internal/node"
	"github.com/hangar-ml/hangar/internal/resources"
)

const agentHelp = `Run a node of a managed cluster. A provider starts one on each machine it creates, with a
short-lived join token; you rarely run it yourself.

The agent joins the workspace with the token, reports what it offers (all of this machine, or
the slice given by --cores, --memory and --gpus, so that several agents can share a machine),
and heartbeats. Each heartbeat reply may assign runs, for which it starts ` + "`hangar supervise`" + `
in its own session under <work-dir>/runs/<id>, cancel runs, or release the node: the agent then
takes no more runs and exits once they ended.

Runs keep going while the server is unreachable; the agent re-registers with them when it is
back. A restarted agent finds its identity (agent.json) and runs in its work dir. SIGTERM stops
the agent and leaves its runs running (they report to the server themselves), unless
--kill-runs-on-exit, which cancels them and waits up to --exit-grace.

Flags default to $HANGAR_JOIN_URL, $HANGAR_JOIN_TOKEN, $HANGAR_NODE_ID and $HANGAR_WORK_DIR,
which providers' create hooks receive; with an https server, $HANGAR_JOIN_CA holds the PEM of
its certificate, the only one the agent and its supervisors trust.`

type agentFlags struct {
	server, token, workDir, nodeID, cores, memory, gpus, address string
	serverCA                                                     string
	logs                                                         cli.LogFlags
	labels, hide                                                 []string
	heartbeat, exitGrace, keepRunDirs                            time.Duration
	objectCache                                                  cli.ObjectCacheSize
	killRuns                                                     bool
}

func newAgentCmd(env *cli.Env) *cobra.Command {
	var f agentFlags
	cmd := &cobra.Command{
		Use:   "agent",
		Short: "Run a managed cluster node (started by providers)",
		Long:  agentHelp,
		Example: `  hangar agent --server https://10.0.0.4:8700 --server-ca server.crt --join-token hj1.... --work-dir /var/lib/hangar
  hangar agent --server $URL --join-token $TOKEN --work-dir /tmp/n2 --cores 4 --memory 16Gi --gpus 2,3`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, log, err := f.config(cmd.Context())
			if err != nil {
				return err
			}
			signal.Ignore(syscall.SIGHUP)
			a, err := agent.New(cmd.Context(), cfg, log)
			if err != nil {
				return err
			}
			if cfg.Slice.GPUs != nil {
				// Supervisors, and so the runs, see only this agent's GPUs, numbered as nvidia-smi does.
				os.Setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID")
				os.Setenv("CUDA_VISIBLE_DEVICES", agent.VisibleDevices(a.Info().GPUs))
			}
			return a.Run(cmd.Context())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.server, "server", os.Getenv("HANGAR_JOIN_URL"), "workspace server URL as seen from this machine, or a comma-separated list of the servers of a replicated workspace, tried in turn ($HANGAR_JOIN_URL)")
	fl.StringVar(&f.serverCA, "server-ca", "", "PEM certificate (or CA) of an https server, trusted alone (default: $HANGAR_JOIN_CA, the PEM itself)")
	fl.StringVar(&f.token, "join-token", os.Getenv("HANGAR_JOIN_TOKEN"), "join token ($HANGAR_JOIN_TOKEN; not needed once joined)")
	fl.StringVar(&f.workDir, "work-dir", os.Getenv("HANGAR_WORK_DIR"), "agent directory: identity, runs, caches ($HANGAR_WORK_DIR, default ~/.hangar/agent)")
	fl.StringVar(&f.nodeID, "node-id", os.Getenv("HANGAR_NODE_ID"), "node id; must be the one the join token names ($HANGAR_NODE_ID)")
	fl.StringVar(&f.cores, "cores", "", "cores to offer, e.g. 4 or 500m (default: all)")
	fl.StringVar(&f.memory, "memory", "", "memory to offer, e.g. 16Gi (default: all)")
	fl.StringVar(&f.gpus, "gpus", "all", "GPUs to offer: all, none, or indices like 0,1")
	fl.StringArrayVar(&f.labels, "label", nil, "node label key=value (repeatable)")
	fl.StringVar(&f.address, "address", "", "address other nodes of a run reach this one at (default: the address used to reach the server)")
	fl.DurationVar(&f.heartbeat, "heartbeat", agent.DefaultHeartbeat, "how often to report")
	fl.BoolVar(&f.killRuns, "kill-runs-on-exit", false, "on SIGTERM, cancel the runs instead of leaving them running")
	fl.DurationVar(&f.exitGrace, "exit-grace", agent.DefaultExitGrace, "with --kill-runs-on-exit, how long runs get to finish")
	fl.DurationVar(&f.keepRunDirs, "keep-run-dirs", agent.DefaultKeepRunDirs, "how long an ended run's directory stays once the server recorded its end, for debugging")
	fl.Var(&f.objectCache, "object-cache", cli.ObjectCacheHelp())
	f.logs.Register(fl)
	fl.StringArrayVar(&f.hide, "hide", filepath.SplitList(os.Getenv("HANGAR_HIDE")),
		"a directory runs must not see besides the work dir (repeatable; $HANGAR_HIDE, a path list), e.g. the workspace's home on the same machine")
	cmd.AddCommand(newSFTPServerCmd()) // a compute instance's SSH server runs it (hidden)
	return cmd
}

// config turns the flags into an agent configuration; HANGAR_JOIN_TOKEN is removed from the
// environment so that supervisors and runs do not inherit it.
func (f *agentFlags) config(ctx context.Context) (agent.Config, *slog.Logger, error) {
	log, err := f.logs.Logger(os.Stderr)
	if err != nil {
		return agent.Config{}, nil, err
	}
	log = log.With("component", "agent")
	os.Unsetenv("HANGAR_JOIN_TOKEN")
	ca := []byte(os.Getenv("HANGAR_JOIN_CA"))
	os.Unsetenv("HANGAR_JOIN_CA") // supervisors get it in their config, runs in a file
	if f.serverCA != "" {
		if ca, err = os.ReadFile(f.serverCA); err != nil {
			return agent.Config{}, nil, usageError("--server-ca: %v", err)
		}
	}
	if f.server == "" {
		return agent.Config{}, nil, usageError("--server (or $HANGAR_JOIN_URL) is required")
	}
	cfg := agent.Config{ServerURL: f.server, JoinToken: f.token, WorkDir: f.workDir, NodeID: f.nodeID,
		Heartbeat: f.heartbeat, KillRunsOnExit: f.killRuns, ExitGrace: f.exitGrace, KeepRunDirs: f.keepRunDirs, ObjectCacheBytes: int64(f.objectCache), Version: cli.Version, Labels: map[string]string{},
		Hide: f.hide, ServerCA: ca}
	if cfg.WorkDir == "" {
		home, herr := os.UserHomeDir()
		if herr != nil {
			return cfg, nil, usageError("--work-dir is required (no home directory: %v)", herr)
		}
		cfg.WorkDir = filepath.Join(home, ".hangar", "agent")
	}
	if f.cores != "" {
		if cfg.Slice.MilliCPU, err = resources.ParseCPU(f.cores); err != nil {
			return cfg, nil, usageError("--cores: %v", err)
		}
	}
	if f.memory != "" {
		if cfg.Slice.Memory, err = resources.ParseMemory(f.memory); err != nil {
			return cfg, nil, usageError("--memory: %v", err)
		}
	}
	if cfg.Slice.GPUs, err = agent.ParseGPUs(f.gpus); err != nil {
		return cfg, nil, usageError("%v", err)
	}
	for _, l := range f.labels {
		k, v, ok := strings.Cut(l, "=")
		if !ok || k == "" {
			return cfg, nil, usageError("--label %q: want key=value", l)
		}
		cfg.Labels[k] = v
	}
	if cfg.Exe, err = os.Executable(); err != nil {
		return cfg, nil, fmt.Errorf("find own binary: %w", err)
	}
	cfg.Machine = node.Detect(ctx)
	cfg.Machine.Address = f.address
	if cfg.Machine.Address == "" {
		cfg.Machine.Address, _ = node.AddressToward(api.FirstURL(cfg.ServerURL)) // "" when it cannot be told
	}
	return cfg, log, nil
}
