package cli

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hangar-ml/hangar/internal/api"
)

func newUserCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "user",
		Short: "Manage the workspace's users and their roles (owners only)",
		Long: `Users of a workspace each have a role: ` + roleHelp + `.
  owner             everything: secrets, users, roles, settings, the audit log
  contributor       read; submit and cancel jobs; create assets, environments, endpoints
  compute-operator  read; manage computes, nodes, instances and sizes
  reader            read everything but secrets' values and endpoint keys
The workspace token ($HANGAR_HOME/token) acts as the user "admin", an owner that cannot be
deleted or demoted. See docs/users.md.`,
		Example: `  hangar user create rita --role reader          # prints rita's first token, once
  hangar user list
  hangar user set-role rita contributor
  hangar user link-oidc rita 248289761001          # rita signs in to the studio with OpenID Connect
  hangar user delete rita --yes`,
	}
	cmd.AddCommand(newUserCreateCmd(env), newUserListCmd(env), newUserSetRoleCmd(env), newUserLinkOIDCCmd(env),
		newUserUnlinkOIDCCmd(env), newUserDeleteCmd(env))
	return groupCmd(cmd)
}

// parseDays reads --expires: a number of days, "30d" or "30".
func parseDays(v string) (int, error) {
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(strings.TrimSuffix(v, "d"))
	if err != nil || n < 1 {
		return 0, usageError("--expires: %q is not a number of days, like 30d", v)
	}
	return n, nil
}

func newUserCreateCmd(env *Env) *cobra.Command {
	var role, expires, subject string
	cmd := &cobra.Command{
		Use:   "create NAME --role ROLE",
		Short: "Add a user and print their first personal token (shown once)",
		Long: `Add a user with a role (` + roleHelp + `) and print their first personal token, named "first",
on stdout: it is shown this once; hand it to the user, who logs in with ` + "`hangar login`" + `.
NAME is a lowercase letter, then up to 31 lowercase letters, digits, '-' or '_'.
With --oidc-subject, the user may also sign in to the studio with the server's OpenID Connect
issuer (` + "`hangar server --oidc-issuer`" + `) as that subject (the ID token's "sub").`,
		Example: "  hangar user create rita --role reader\n  hangar user create carl --role contributor --expires 30d > carl.token\n" +
			"  hangar user create olga --role reader --oidc-subject 248289761001",
		Args: cobra.ExactArgs(1),
		RunE: env.newTokenRunE(&expires, func(ctx context.Context, c *api.Client, args []string, days int) (any, string, string, error) {
			rep, err := c.Users.Create(ctx, api.CreateUserRequest{Name: args[0], Role: role, ExpiresDays: days, OIDCSubject: subject})
			if err != nil {
				return nil, "", "", err
			}
			return rep, fmt.Sprintf("Created user %s with the role %s. Their personal token %q (expires %s), shown this once:\n",
				rep.User.Name, rep.User.Role, rep.Token.Name, fmtTime(&rep.Token.ExpiresAt)), rep.Token.Token, nil
		}),
	}
	cmd.Flags().StringVar(&role, "role", "", "the user's role: "+roleHelp)
	cmd.Flags().StringVar(&expires, "expires", "", fmt.Sprintf("the first token's lifetime in days, like 30d (default %dd)", api.DefaultTokenDays))
	cmd.Flags().StringVar(&subject, "oidc-subject", "", "the subject (\"sub\") this user signs in to the studio as at the OpenID Connect issuer")
	_ = cmd.MarkFlagRequired("role")
	return cmd
}

func newUserListCmd(env *Env) *cobra.Command {
	return listCmd(env, "List the users and their roles", "  hangar user list\n  hangar user list -o json",
		func(ctx context.Context, c *api.Client) ([]api.User, error) { return c.Users.List(ctx) },
		[]string{"NAME", "ROLE", "CREATED", "OIDC SUBJECT"},
		func(u api.User) []string { return []string{u.Name, u.Role, fmtTime(&u.CreatedAt), u.OIDCSubject} })
}

func newUserSetRoleCmd(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:     "set-role NAME ROLE",
		Short:   "Change a user's role (takes effect on their next request)",
		Example: "  hangar user set-role rita contributor",
		Args:    cobra.ExactArgs(2),
		RunE: env.withClient(func(cmd *cobra.Command, args []string, c *api.Client) error {
			u, err := c.Users.SetRole(cmd.Context(), args[0], args[1])
			if err != nil {
				return err
			}
			fmt.Fprintf(env.Stderr, "User %s now has the role %s\n", u.Name, u.Role)
			return nil
		}),
	}
}

func newUserLinkOIDCCmd(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:   "link-oidc NAME SUBJECT",
		Short: "Let an existing user sign in to the studio as an OpenID Connect subject",
		Long: `Link a user to the subject ("sub") they sign in to the studio as at the server's OpenID Connect
issuer (hangar server --oidc-issuer); the studio's refusal page shows an unlinked identity's
subject. A subject belongs to one user; linking again replaces the user's subject. Their tokens
and role are kept. See docs/users.md.`,
		Example: "  hangar user link-oidc rita 248289761001",
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if args[1] == "" {
				return usageError("SUBJECT is empty: hangar user unlink-oidc %s removes the link", args[0])
			}
			return env.setOIDCSubject(cmd, args[0], args[1])
		},
	}
}

func newUserUnlinkOIDCCmd(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:     "unlink-oidc NAME",
		Short:   "Stop a user signing in to the studio through OpenID Connect",
		Long:    "Remove a user's OpenID Connect subject: the studio's sign-ins already made stay until they expire or the user is deleted.",
		Example: "  hangar user unlink-oidc rita",
		Args:    cobra.ExactArgs(1),
		RunE:    func(cmd *cobra.Command, args []string) error { return env.setOIDCSubject(cmd, args[0], "") },
	}
}

func (e *Env) setOIDCSubject(cmd *cobra.Command, name, subject string) error {
	c, err := e.client(cmd.Context())
	if err != nil {
		return err
	}
	u, err := c.Users.SetOIDCSubject(cmd.Context(), name, subject)
	if err != nil {
		return err
	}
	if u.OIDCSubject == "" {
		fmt.Fprintf(e.Stderr, "User %s is linked to no OpenID Connect subject\n", u.Name)
	} else {
		fmt.Fprintf(e.Stderr, "User %s signs in to the studio as OpenID Connect subject %s\n", u.Name, u.OIDCSubject)
	}
	return nil
}

func newUserDeleteCmd(env *Env) *cobra.Command {
	return namedDelete{
		short: "Delete a user and their tokens",
		long: `Delete a user and all their personal tokens, which stop working at once, as do their studio
sessions. Their jobs stay. On a terminal it asks first; elsewhere it refuses unless --yes is given.`,
		example:  "  hangar user delete rita --yes",
		question: "Delete user %s and their tokens?", refusal: "delete user",
		del: func(ctx context.Context, c *api.Client, name string) error {
			if err := c.Users.Delete(ctx, name); err != nil {
				return err
			}
			fmt.Fprintf(env.Stderr, "Deleted user %s\n", name)
			return nil
		},
	}.cmd(env)
}
