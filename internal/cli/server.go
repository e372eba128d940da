package cli

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/hangar-ml/hangar/internal/config"
	"github.com/hangar-ml/hangar/internal/home"
	localprovider "github.com/hangar-ml/hangar/internal/provider/local"
)

func newServerCmd(env *Env) *cobra.Command {
	var o ServeOptions
	var logs logFlags
	cmd := &cobra.Command{
		Use:   "server",
		Short: "Run the workspace server in the foreground",
		Long: `Run the workspace server: the HTTP API, the store (SQLite in the workspace directory),
the blob store and the controller that runs jobs. The CLI starts one in the background
for the local workspace when needed, so you rarely run this yourself.

On a loopback address the server may serve plain HTTP. On any other address it serves HTTPS:
--tls generates a certificate (ECDSA P-256, kept in <home>/tls and reused across restarts)
naming the listen address, this machine and every --tls-host; --tls-cert and --tls-key serve
your own. Supervisors and agents trust exactly that certificate; the CLI pins it on first use
(see --trust-fingerprint). --insecure-no-tls serves plain HTTP anyway: the workspace token
then crosses the network in clear.

--oidc-issuer, --oidc-client-id and --oidc-client-secret-file add an OpenID Connect sign-in
to the studio; a user signs in as the subject an owner linked to them with
` + "`hangar user create NAME --role ROLE --oidc-subject SUB`" + ` (docs/users.md).

On PostgreSQL (--database), several servers may serve one workspace, each started with the same
database and workspace directory (a shared filesystem across machines): one leads (it runs the
controller and serves the API) and the others forward every request to it; when the leader
dies another takes over within seconds (docs/replicas.md). --advertise-url is the address the
other servers and the cluster nodes reach this one at.`,
		Example: `  hangar server                       # serve ~/.hangar (or $HANGAR_HOME) on a loopback port
  hangar server --home /srv/hangar --listen 0.0.0.0:8700 --tls --tls-host hangar.example.com
  hangar server --listen 10.0.0.4:8700 --tls-cert server.crt --tls-key server.key
  hangar server --listen 0.0.0.0:8700 --tls --oidc-issuer https://login.example.com \
      --oidc-client-id hangar --oidc-client-secret-file /etc/hangar/oidc-secret
  HANGAR_DATABASE_URL=postgres://hangar@db/hangar hangar server --home /shared/hangar \
      --listen 0.0.0.0:8700 --tls --advertise-url https://node2.example.com:8700   # one of several
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
			if o.Database == "" {
				o.Database = os.Getenv(home.DatabaseEnv)
			}
			if o.AdvertiseURL != "" {
				if o.Database == "" {
					return usageError("--advertise-url is for a workspace served by several servers, on PostgreSQL (--database)")
				}
				if u, err := url.Parse(o.AdvertiseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" && u.Path != "/" {
					return usageError("--advertise-url %q: want http(s)://host:port", o.AdvertiseURL)
				}
			}
			if err := o.TLS.check(); err != nil {
				return err
			}
			if err := o.OIDC.check(); err != nil {
				return err
			}
			return env.deps.Serve(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.Home, "home", "", "workspace directory (default $HANGAR_HOME or ~/.hangar)")
	cmd.Flags().StringVar(&o.Database, "database", "", "PostgreSQL URL of the workspace's database (default $"+home.DatabaseEnv+
		", else the SQLite file in the workspace directory); keep the password out of the command line: in $"+home.DatabaseEnv+" or ~/.pgpass")
	cmd.Flags().StringVar(&o.AdvertiseURL, "advertise-url", "", "this server's address for the workspace's other servers and its cluster nodes, on PostgreSQL (default: its listen address)")
	cmd.Flags().StringVar(&o.Listen, "listen", "", "address to listen on (default: the last one used, else a free 127.0.0.1 port)")
	o.TLS.register(cmd)
	o.OIDC.register(cmd)
	logs.register(cmd.Flags())
	// The controller's flags default to what it uses for a zero setting.
	def := config.DefaultController
	cmd.Flags().DurationVar(&o.Controller.CancelGrace, "cancel-grace", def.CancelGrace, "time a canceled run's processes get between SIGTERM and SIGKILL")
	cmd.Flags().DurationVar(&o.Controller.Heartbeat, "heartbeat", def.Heartbeat, "how often run supervisors report")
	cmd.Flags().DurationVar(&o.Controller.StaleAfter, "stale-after", def.StaleAfter, "silence after which a run's backend is asked about it")
	cmd.Flags().DurationVar(&o.Controller.NotRespondingAfter, "not-responding-after", def.NotRespondingAfter, "silence after which a run is NotResponding")
	cmd.Flags().DurationVar(&o.Controller.LostAfter, "lost-after", def.LostAfter, "unreachability after which a run fails")
	cmd.Flags().DurationVar(&o.Controller.UnreachableLimit, "unreachable-limit", def.UnreachableLimit,
		"how long a queued run waits for a target that does not answer (refused connection, SSH handshake timeout) before it fails")
	cmd.Flags().DurationVar(&o.Controller.TokenTTL, "run-token-ttl", def.TokenTTL, "how long a run token is valid (heartbeats renew a live run's token)")
	cmd.Flags().DurationVar(&o.Controller.TokenGrace, "run-token-grace", def.TokenGrace, "how long a run's token still works after the run ended (late retries)")
	cmd.Flags().DurationVar(&o.Controller.NodeOutputsWait, "node-outputs-wait", def.NodeOutputsWait, "how long a multi-node run's artifacts wait for the other nodes' logs and outputs")
	cmd.Flags().DurationVar(&o.Controller.KeepRunDirs, "keep-run-dirs", def.KeepRunDirs,
		"how long an ended run's directory stays on its node (local and SSH targets) after its files are in the workspace, for debugging")
	cmd.Flags().DurationVar(&o.Controller.BlobGrace, "blob-grace", def.BlobGrace,
		"blobs younger than this are never collected (uploads whose job is not created yet)")
	cmd.Flags().DurationVar(&o.Controller.GCEvery, "gc-every", def.GCEvery, "how often unreferenced blobs are collected (negative: never; see workspace gc)")
	cmd.Flags().Var(&o.ObjectCache, "object-cache", ObjectCacheHelp()+"; this machine's and attached VMs'")
	cmd.AddCommand(newServerStopCmd(env), newServerStatusCmd(env))
	return cmd
}

// TLSOptions are `hangar server`'s TLS flags.
type TLSOptions struct {
	On            bool
	CertFile      string
	KeyFile       string
	Hosts         []string
	InsecureNoTLS bool
}

func (t *TLSOptions) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.BoolVar(&t.On, "tls", false, "serve HTTPS (implied by --tls-cert; a certificate is generated unless given)")
	f.StringVar(&t.CertFile, "tls-cert", "", "PEM certificate (chain) to serve, with --tls-key")
	f.StringVar(&t.KeyFile, "tls-key", "", "PEM private key of --tls-cert")
	f.StringSliceVar(&t.Hosts, "tls-host", nil, "extra DNS name or IP for the generated certificate (repeatable)")
	f.BoolVar(&t.InsecureNoTLS, "insecure-no-tls", false, "serve plain HTTP on a non-loopback address (the token crosses the network in clear)")
}

// check refuses flags that contradict each other.
func (t TLSOptions) check() error {
	switch {
	case (t.CertFile == "") != (t.KeyFile == ""):
		return usageError("--tls-cert and --tls-key go together")
	case t.CertFile != "" && len(t.Hosts) > 0:
		return usageError("--tls-host names a generated certificate's hosts; a given --tls-cert already has its own")
	case t.InsecureNoTLS && (t.On || t.CertFile != "" || len(t.Hosts) > 0):
		return usageError("--insecure-no-tls contradicts --tls, --tls-cert and --tls-host")
	}
	return nil
}

func newServerStopCmd(env *Env) *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "stop",
		Short: "Stop the local workspace's server, and the idle agents it started on this machine",
		Long: `Stop the local workspace's server (SIGTERM; SIGKILL after 30 s). Before it stops, the server
stops the agents of managed clusters and of the serverless pool that it started on this machine
(the local provider) and that run nothing; a server started later creates the nodes its
clusters need. What still runs is said on stderr and left running: runs go on and report when
the server is back (the supervisors of local runs, agents with runs, a running compute
instance's agent; stop an instance with hangar compute stop first). --all stops the agents that
are left too: their runs are canceled, and a server started later finds their nodes silent and
replaces them. A crash (kill -9) leaves everything running, and a restarted server takes it back.`,
		Example: "  hangar server stop\n  hangar server stop --all   # the agents that still run jobs too",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := home.Default()
			if err != nil {
				return err
			}
			stopped, err := h.Stop(cmd.Context(), 30*time.Second)
			if err != nil {
				return err
			}
			if stopped {
				fmt.Fprintf(env.Stderr, "Stopped the server of %s\n", h.Dir)
			} else {
				fmt.Fprintf(env.Stderr, "No server is running for %s\n", h.Dir)
			}
			return env.leftAgents(cmd.Context(), h, all)
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "also stop this machine's agents that still run jobs (their runs are canceled)")
	return cmd
}

// leftAgents says which of the local provider's agents still run once the server stopped, and
// stops them with all.
func (e *Env) leftAgents(ctx context.Context, h home.Home, all bool) error {
	agents, err := localprovider.Running(h.NodesDir())
	if err != nil || len(agents) == 0 {
		return err
	}
	if !all {
		fmt.Fprintf(e.Stderr, "Left running (their runs go on and report when the server is back; hangar server stop --all stops them):\n")
		for _, a := range agents {
			fmt.Fprintf(e.Stderr, "  the agent of node %s (pid %d)\n", a.NodeID, a.PID)
		}
		return nil
	}
	var errs []error
	for _, a := range agents {
		if err := localprovider.StopAgent(ctx, a); err != nil {
			errs = append(errs, err)
			continue
		}
		fmt.Fprintf(e.Stderr, "Stopped the agent of node %s (pid %d)\n", a.NodeID, a.PID)
	}
	return errors.Join(errs...)
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
			// One of several servers on one PostgreSQL database (docs/replicas.md): server.json
			// names the leader; say so, on the same line (scripts take the URL from it).
			role := ""
			tok, _ := h.ReadToken()
			if c, err := si.Client(tok); err == nil {
				if hl, err := c.Health(cmd.Context()); err == nil && hl.Role != "" {
					role = ", the " + hl.Role + " of the workspace's servers"
				}
			}
			fmt.Fprintf(env.Stdout, "running: %s pid %d (%s)%s\n", si.URL, si.PID, h.Dir, role)
			return nil
		},
	}
}
