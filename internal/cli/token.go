package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/hangar-ml/hangar/internal/api"
)

func newTokenCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "token",
		Short: "Manage your personal API tokens",
		Long: `Personal API tokens ("hpt_..." ) authenticate you to a workspace, with your role. The server keeps
only their SHA-256: a token is shown once, when created. Each has a name, an expiry (90 days
unless --expires says otherwise) and a last-used time; a revoked or expired token is refused at
once. An owner may manage another user's tokens with --user.`,
		Example: `  hangar token create --name laptop --expires 30d
  hangar token list
  hangar token revoke laptop`,
	}
	cmd.AddCommand(newTokenCreateCmd(env), newTokenListCmd(env), newTokenRevokeCmd(env))
	return groupCmd(cmd)
}

func newTokenCreateCmd(env *Env) *cobra.Command {
	var name, expires, user string
	cmd := &cobra.Command{
		Use:   "create --name NAME",
		Short: "Create a personal token and print it (shown once)",
		Long: `Create a personal token and print it on stdout, this once. NAME (unique among your tokens) is a
letter or digit, then up to 63 letters, digits, '.', '-' or '_'.`,
		Example: "  hangar token create --name laptop\n  hangar token create --name ci --expires 7d | hangar login --with-token --workspace $URL",
		Args:    cobra.NoArgs,
		RunE: env.newTokenRunE(&expires, func(ctx context.Context, c *api.Client, _ []string, days int) (any, string, string, error) {
			tok, err := c.Tokens.Create(ctx, api.CreateTokenRequest{Name: name, User: user, ExpiresDays: days})
			if err != nil {
				return nil, "", "", err
			}
			return tok, fmt.Sprintf("Created token %q of %s, expiring %s; shown this once:\n", tok.Name, tok.User, fmtTime(&tok.ExpiresAt)), tok.Token, nil
		}),
	}
	cmd.Flags().StringVar(&name, "name", "", "the token's name")
	cmd.Flags().StringVar(&expires, "expires", "", fmt.Sprintf("lifetime in days, like 30d (default %dd)", api.DefaultTokenDays))
	cmd.Flags().StringVar(&user, "user", "", "another user's token (owners only)")
	_ = cmd.MarkFlagRequired("name")
	return cmd
}

func newTokenListCmd(env *Env) *cobra.Command {
	var user string
	var all bool
	cmd := leaf[[]api.TokenInfo]{
		Use:     "list",
		Short:   "List your personal tokens (never their values)",
		Example: "  hangar token list\n  hangar token list --all    # every user's (owners only)",
		ask: func(ctx context.Context, c *api.Client, _ []string) ([]api.TokenInfo, error) {
			if all {
				user = "*"
			}
			return c.Tokens.List(ctx, user)
		},
		human: func(w io.Writer, list []api.TokenInfo) error {
			return tableOf(w, []string{"USER", "NAME", "STATUS", "CREATED", "EXPIRES", "LAST USED"}, list, func(t api.TokenInfo) []string {
				return []string{t.User, t.Name, t.Status, fmtTime(&t.CreatedAt), fmtTime(&t.ExpiresAt), fmtTime(t.LastUsedAt)}
			})
		},
	}.cmd(env)
	cmd.Flags().StringVar(&user, "user", "", "another user's tokens (owners only)")
	cmd.Flags().BoolVar(&all, "all", false, "every user's tokens (owners only)")
	return cmd
}

func newTokenRevokeCmd(env *Env) *cobra.Command {
	var user string
	cmd := &cobra.Command{
		Use:     "revoke NAME",
		Short:   "Revoke a personal token: it is refused from the next request on",
		Example: "  hangar token revoke laptop\n  hangar token revoke first --user rita",
		Args:    cobra.ExactArgs(1),
		RunE: env.withClient(func(cmd *cobra.Command, args []string, c *api.Client) error {
			t, err := c.Tokens.Revoke(cmd.Context(), user, args[0])
			if err != nil {
				return err
			}
			fmt.Fprintf(env.Stderr, "Revoked token %q of %s\n", t.Name, t.User)
			return nil
		}),
	}
	cmd.Flags().StringVar(&user, "user", "", "another user's token (owners only)")
	return cmd
}

// newTokenRunE is the RunE of a verb that makes a personal token (token create, user create): it
// reads --expires before dialing, has create make the token, says on stderr what create said was
// made and prints the token's value this once (with -o json or yaml, the whole reply).
func (e *Env) newTokenRunE(expires *string, create func(ctx context.Context, c *api.Client, args []string, days int) (reply any, made, token string, err error)) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		days, err := parseDays(*expires)
		if err != nil {
			return err
		}
		return e.withClient(func(cmd *cobra.Command, args []string, c *api.Client) error {
			reply, made, token, err := create(cmd.Context(), c, args, days)
			if err != nil {
				return err
			}
			fmt.Fprint(e.Stderr, made)
			return e.printData(reply, func(w io.Writer) error {
				_, err := fmt.Fprintln(w, token)
				return err
			})
		})(cmd, args)
	}
}
