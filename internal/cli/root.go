package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hangar-ml/hangar/internal/config"
)

// Exit codes, documented in `hangar --help`.
const (
	ExitOK       = 0
	ExitFailure  = 1
	ExitUsage    = 2
	ExitFailed   = 3 // the run ended Failed
	ExitCanceled = 4 // the run ended Canceled
)

// ExitError carries an exit code through cobra.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// usageError marks a mistake in the command line itself.
func usageError(format string, a ...any) error {
	return &ExitError{Code: ExitUsage, Err: fmt.Errorf(format, a...)}
}

// ServeOptions configure `hangar server`.
type ServeOptions struct {
	Home     string
	Database string // a PostgreSQL URL ("" for the workspace's SQLite file)
	Listen   string
	// AdvertiseURL is this server's address for the workspace's other servers and its nodes
	// (a replicated workspace, design 0020); empty: the listen address.
	AdvertiseURL string
	TLS          TLSOptions  // server.go
	OIDC         OIDCOptions // oidc.go
	Log          *slog.Logger
	Controller   config.Controller
	// ObjectCache bounds the object cache of the nodes this server starts runs on itself (this
	// machine, attached VMs).
	ObjectCache ObjectCacheSize
}

// Deps are the parts the composition root provides.
type Deps struct {
	Serve func(ctx context.Context, o ServeOptions) error
	// Node gives the node-side verbs (supervise, agent, reap, pod-entry, mpi-rsh: internal/nodecmd),
	// which this package does not import.
	Node func(env *Env) []*cobra.Command
}

// Env is what a command body uses: its output streams and how to reach the workspace.
type Env struct {
	Stdout, Stderr io.Writer
	Output         string // table, json, yaml, tsv or none
	Workspace      string // --workspace URL (else HANGAR_URL, else the local workspace)
	// Query is a JMESPath expression applied to the JSON of what a command prints (--query).
	Query string
	// TrustFingerprint accepts an https workspace's certificate by its fingerprint (trust.go).
	TrustFingerprint string
	// Stdin is where a confirmation is read (default os.Stdin); terminal, when set, replaces
	// the check that it is a terminal (tests).
	Stdin    io.Reader
	terminal func(io.Reader) bool
	deps     Deps
}

const rootHelp = `Hangar runs machine-learning jobs on this machine, on VMs attached over SSH, on autoscaling
clusters of Hangar agents and on Slurm clusters, from Azure ML compatible YAML specs.

The CLI talks to the workspace at --workspace or $HANGAR_URL (with $HANGAR_TOKEN, else the token
` + "`hangar login`" + ` stored for that URL). With neither, it uses the local workspace in $HANGAR_HOME (default ~/.hangar) and starts its server in the
background when none is running.

Exit codes: 0 ok, 1 error, 2 usage error, 3 the job ended Failed, 4 the job ended Canceled.`

const rootExample = `  hangar job create -f job.yml --stream        # run a job on the default target and follow its log
  hangar compute attach -f vm.yml               # add a machine reachable over SSH as a target
  hangar --workspace https://10.0.0.4:8700 job list -o json   # a team's server (its certificate pinned on first use)`

// NewRoot builds the command tree.
func NewRoot(deps Deps) *cobra.Command {
	return newRoot(&Env{Stdout: os.Stdout, Stderr: os.Stderr, deps: deps})
}

func newRoot(env *Env) *cobra.Command {
	root := &cobra.Command{
		Use:           "hangar",
		Short:         "Self-hosted ML compute: run training jobs on any compute target",
		Long:          rootHelp,
		Example:       rootExample,
		Version:       Version,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			out, err := outputFormat(env.Output)
			if err != nil {
				return err
			}
			env.Output = out
			return checkQuery(env.Query)
		},
	}
	root.SetVersionTemplate("hangar {{.Version}}\n")
	root.PersistentFlags().StringVarP(&env.Output, "output", "o", "table", "output format: table, json, yaml, tsv (as az: values tab-separated, one row a line) or none")
	root.PersistentFlags().StringVar(&env.Query, "query", "", "JMESPath expression applied to the JSON output (as az --query), e.g. \"[?status=='Failed'].name\"")
	root.PersistentFlags().StringVar(&env.Workspace, "workspace", "", "workspace server URL (default $HANGAR_URL, else the local workspace)")
	root.PersistentFlags().StringVar(&env.TrustFingerprint, "trust-fingerprint", "", "accept and pin an https workspace's certificate with this SHA256: fingerprint (default $"+FingerprintEnv+")")
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return &ExitError{Code: ExitUsage, Err: err}
	})
	root.AddCommand(newServerCmd(env), newComputeCmd(env), newJobCmd(env), newEnvironmentCmd(env), newSettingsCmd(env), newVersionCmd(env))
	if env.deps.Node != nil {
		root.AddCommand(env.deps.Node(env)...)
	}
	root.AddCommand(newWorkspaceCmd(env))
	root.AddCommand(newStudioCmd(env))
	root.AddCommand(newModelCmd(env))
	root.AddCommand(newComponentCmd(env))
	root.AddCommand(newDataCmd(env), newDatastoreCmd(env), newConnectionCmd(env))
	root.AddCommand(newOnlineEndpointCmd(env), newOnlineDeploymentCmd(env))
	root.AddCommand(newBatchEndpointCmd(env), newBatchDeploymentCmd(env))
	root.AddCommand(newSecretCmd(env))
	root.AddCommand(newWebhookCmd(env))
	root.AddCommand(newCuratedCmd(env)) // curated.go
	root.AddCommand(newLoginCmd(env), newLogoutCmd(env), newWhoAmICmd(env), newUserCmd(env), newTokenCmd(env), newAuditCmd(env))
	return root
}

// Execute runs the command tree and returns the process exit code.
func Execute(ctx context.Context, root *cobra.Command, stderr io.Writer) int {
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		if ee.Err != nil {
			fmt.Fprintln(stderr, "Error:", ee.Err)
		}
		return ee.Code
	}
	msg := err.Error()
	if strings.HasPrefix(msg, "unknown command") || strings.HasPrefix(msg, "unknown flag") ||
		strings.Contains(msg, "accepts ") || strings.HasPrefix(msg, "required flag") {
		fmt.Fprintln(stderr, "Error:", msg)
		return ExitUsage
	}
	fmt.Fprintln(stderr, "Error:", msg)
	return ExitFailure
}

func newVersionCmd(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print the version",
		Example: "  hangar version",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			fmt.Fprintln(env.Stdout, "hangar", Version)
			return nil
		},
	}
}

// Version is set at build time with -ldflags "-X github.com/hangar-ml/hangar/internal/cli.Version=...".
var Version = "dev"

// groupCmd makes a command that only holds subcommands refuse an unknown one with a usage error
// (exit 2) instead of printing help and succeeding.
func groupCmd(c *cobra.Command) *cobra.Command {
	c.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			return usageError("unknown command %q for %q", args[0], cmd.CommandPath())
		}
		return nil
	}
	c.RunE = func(cmd *cobra.Command, args []string) error { return cmd.Help() }
	return c
}
