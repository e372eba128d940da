package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/binding"
)

// maxSecretFile bounds what secret set reads; the server refuses more than 64 KiB anyway.
const maxSecretFile = 1 << 20

func newSecretCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "secret",
		Short: "Manage workspace secrets that jobs get as environment variables",
		Long: `Workspace secrets are values (tokens, passwords, keys) that jobs get as environment variables
without the value appearing in the job's YAML, the run's spec, or its logs. A job names one in
environment_variables:

  environment_variables:
    HF_TOKEN: ${{secrets.hf_token}}

The value is sealed with the workspace key and never returned by the API; the run's supervisor
fetches it with the run's own token, and replaces it with *** in the run's logs. See docs/secrets.md.`,
		Example: `  hangar secret set hf_token                 # asks for the value, without echo
  printf %s "$TOKEN" | hangar secret set hf_token
  hangar secret set ssh_key --from-file ~/.ssh/id_ed25519
  hangar secret set db_password --allow-user rita --allow-role owner
  hangar secret access hf_token --allow-role contributor
  hangar secret list
  hangar secret delete hf_token --yes
  hangar secret rotate-key --yes`,
	}
	cmd.AddCommand(newSecretSetCmd(env), newSecretAccessCmd(env), newSecretListCmd(env), newSecretDeleteCmd(env), newSecretRotateCmd(env))
	return groupCmd(cmd)
}

func newSecretSetCmd(env *Env) *cobra.Command {
	var fromFile string
	var access accessFlags
	cmd := &cobra.Command{
		Use:   "set NAME",
		Short: "Create a secret or replace its value",
		Long: `Create a secret or replace its value. The value is read from --from-file (as it is), else from
stdin: on a terminal it is asked for without echo; from a pipe, everything up to the end is read,
less one final line break. NAME is an environment variable's name: a letter or '_', then letters,
digits or '_'.

--allow-user and --allow-role (repeatable) limit who may name the secret in their jobs to those
users, the users of those roles, and owners; without them a new secret is open to every user who
may submit jobs, and an existing one keeps its access (change it with hangar secret access).`,
		Example: "  hangar secret set hf_token\n  hangar secret set db_password < password.txt\n  hangar secret set ssh_key --from-file ~/.ssh/id_ed25519\n" +
			"  hangar secret set db_password --allow-user rita --allow-role owner",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			if err := binding.CheckSecretName(name); err != nil {
				return usageError("%v", err)
			}
			value, err := env.secretValue(name, fromFile)
			if err != nil {
				return err
			}
			c, err := env.client(cmd.Context())
			if err != nil {
				return err
			}
			req := api.SetSecretRequest{Value: value}
			if access.given() {
				a := access.access()
				req.Access = &a
			}
			reply, err := c.Secrets.Put(cmd.Context(), name, req)
			if err != nil {
				return err
			}
			verb := "Updated"
			if reply.Created {
				verb = "Created"
			}
			fmt.Fprintf(env.Stderr, "%s secret %s (may be used by %s)\n", verb, name, reply.Access)
			if env.Output != "table" {
				return env.printData(reply, nil)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&fromFile, "from-file", "", "read the value from this file, as it is")
	access.add(cmd)
	return cmd
}

// secretValue reads a secret's value: the file's bytes, else stdin (asked for without echo on
// a terminal; a pipe's content less one final line break).
func (e *Env) secretValue(name, file string) (string, error) {
	var b []byte
	var err error
	switch {
	case file != "":
		b, err = readLimited(file)
	case e.stdinTerminal():
		f, ok := e.stdin().(*os.File)
		if !ok {
			return "", fmt.Errorf("read the value of %s: stdin is not a file", name)
		}
		fmt.Fprintf(e.Stderr, "Value of secret %s: ", name)
		b, err = term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(e.Stderr)
	default:
		b, err = io.ReadAll(io.LimitReader(e.stdin(), maxSecretFile+1))
		b = bytes.TrimSuffix(bytes.TrimSuffix(b, []byte("\n")), []byte("\r"))
	}
	if err != nil {
		return "", fmt.Errorf("read the value of %s: %w", name, err)
	}
	if len(b) > maxSecretFile {
		return "", fmt.Errorf("read the value of %s: more than %d bytes", name, maxSecretFile)
	}
	if len(b) == 0 {
		return "", usageError("the value of %s is empty (give it on stdin or with --from-file)", name)
	}
	return string(b), nil
}

func readLimited(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxSecretFile+1))
}

func newSecretListCmd(env *Env) *cobra.Command {
	return listCmd(env, "List the secrets: names, times and the jobs using them (never values)", "  hangar secret list\n  hangar secret list -o json",
		func(ctx context.Context, c *api.Client) ([]api.SecretInfo, error) { return c.Secrets.List(ctx) },
		[]string{"NAME", "MAY BE USED BY", "CREATED", "UPDATED", "USED BY (ACTIVE JOBS)", "LAST FETCHED BY"},
		func(s api.SecretInfo) []string {
			last := ""
			if s.LastUsedBy != "" {
				last = s.LastUsedBy + " at " + fmtTime(&s.LastUsedAt)
			}
			return []string{s.Name, s.Access.String(), fmtTime(&s.CreatedAt), fmtTime(&s.UpdatedAt), strings.Join(s.UsedBy, ","), last}
		})
}

func newSecretDeleteCmd(env *Env) *cobra.Command {
	return namedDelete{
		short: "Delete a secret",
		long: `Delete a secret. Active jobs naming it that have not started yet fail in Preparing, saying the
secret is gone. On a terminal it asks first; elsewhere it refuses unless --yes is given.`,
		example:  "  hangar secret delete hf_token --yes",
		question: "Delete secret %s?", refusal: "delete secret",
		del: func(ctx context.Context, c *api.Client, name string) error {
			out, err := c.Secrets.Delete(ctx, name)
			if err != nil {
				return err
			}
			fmt.Fprintf(env.Stderr, "Deleted secret %s\n", name)
			if len(out.UsedBy) > 0 {
				fmt.Fprintf(env.Stderr, "warning: active jobs name it: %s\n", strings.Join(out.UsedBy, ", "))
			}
			return nil
		},
	}.cmd(env)
}

func newSecretRotateCmd(env *Env) *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use:   "rotate-key",
		Short: "Reseal every secret of the workspace under a new key",
		Long: `Make a new workspace key and reseal under it, in one transaction, every value the workspace keeps
sealed: job secrets, online endpoints' keys, and compute targets' passwords and private keys. The old
key file is replaced only after that committed; a server stopped in the middle finishes the rotation
when it starts again, and nothing is lost (docs/secrets.md). A backup taken before holds the old key.`,
		Example: "  hangar secret rotate-key --yes",
		Args:    cobra.NoArgs,
		RunE: env.withClient(func(cmd *cobra.Command, args []string, c *api.Client) error {
			if err := env.confirm(yes, "Reseal every secret of the workspace under a new key?", "rotate the key"); err != nil {
				return err
			}
			reply, err := c.Secrets.RotateKey(cmd.Context())
			if err != nil {
				return err
			}
			fmt.Fprintf(env.Stderr, "Resealed %d values under key %s\n", reply.Resealed, reply.KeyID)
			if env.Output != "table" {
				return env.printData(reply, nil)
			}
			return nil
		}),
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask for confirmation")
	return cmd
}
