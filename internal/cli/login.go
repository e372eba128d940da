package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/hangar-ml/hangar/internal/api"
)

// Stored credentials, as gh and az keep theirs: one file in the user's config directory,
// readable by the user only, holding a personal token per workspace URL.

// credentials is the file's content.
type credentials struct {
	Workspaces map[string]credential `json:"workspaces"`
}

type credential struct {
	User  string `json:"user"`
	Token string `json:"token"`
}

// credentialsPath is $XDG_CONFIG_HOME/hangar/credentials.json (os.UserConfigDir).
func credentialsPath() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("find the config directory for credentials: %w", err)
	}
	return filepath.Join(dir, "hangar", "credentials.json"), nil
}

// credentialKey is how a workspace URL is stored: without a trailing slash.
func credentialKey(url string) string { return strings.TrimRight(url, "/") }

func loadCredentials() (credentials, string, error) {
	c := credentials{Workspaces: map[string]credential{}}
	path, err := credentialsPath()
	if err != nil {
		return c, "", err
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return c, path, nil
	}
	if err != nil {
		return c, path, fmt.Errorf("read credentials: %w", err)
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return c, path, fmt.Errorf("%s: not valid JSON: %w", path, err)
	}
	if c.Workspaces == nil {
		c.Workspaces = map[string]credential{}
	}
	return c, path, nil
}

// save writes the credentials through a temporary file, 0600 in a 0700 directory, so a
// crash leaves the old file or the new one.
func (c credentials) save(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("save credentials: %w", err)
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".credentials-*")
	if err != nil {
		return fmt.Errorf("save credentials: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("save credentials: %w", err)
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("save credentials %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("save credentials %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("save credentials %s: %w", path, err)
	}
	return nil
}

// token is the token for the workspace at url: $HANGAR_TOKEN, else what `hangar login`
// stored for that URL, else none.
func (e *Env) token(url string) string {
	if t := os.Getenv("HANGAR_TOKEN"); t != "" {
		return t
	}
	c, _, err := loadCredentials()
	if err != nil {
		fmt.Fprintf(e.Stderr, "warning: ignoring stored credentials: %v\n", err)
		return ""
	}
	return c.Workspaces[credentialKey(url)].Token
}

// workspaceURL is the URL login and logout act on: --workspace, else $HANGAR_URL.
func (e *Env) workspaceURL() (string, error) {
	u := e.Workspace
	if u == "" {
		u = os.Getenv("HANGAR_URL")
	}
	if u == "" {
		return "", usageError("say which workspace: --workspace URL or $HANGAR_URL (the local workspace needs no login)")
	}
	return credentialKey(u), nil
}

func newLoginCmd(env *Env) *cobra.Command {
	var withToken bool
	cmd := &cobra.Command{
		Use:   "login",
		Short: "Log in to a workspace with a personal API token and store it",
		Long: `Log in to the workspace at --workspace (or $HANGAR_URL) with a personal API token, made by
` + "`hangar token create`" + ` or given by an owner with ` + "`hangar user create`" + `. The token is read from stdin:
asked for without echo on a terminal, or piped with --with-token. It is checked against the
workspace (GET /api/whoami), then stored in the user's config directory
(~/.config/hangar/credentials.json, mode 0600), by workspace URL. Later commands use it for that
URL; $HANGAR_TOKEN, when set, still comes first.`,
		Example: `  hangar login --workspace https://hangar.example.com:8700
  printf %s "$TOKEN" | hangar login --workspace https://hangar.example.com:8700 --with-token`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			url, err := env.workspaceURL()
			if err != nil {
				return err
			}
			tok, err := env.readToken(withToken)
			if err != nil {
				return err
			}
			c, err := env.client(cmd.Context())
			if err != nil {
				return err
			}
			c.SetToken(tok)
			me, err := c.Users.WhoAmI(cmd.Context())
			if err != nil {
				return fmt.Errorf("check the token with %s: %w", url, err)
			}
			creds, path, err := loadCredentials()
			if err != nil {
				return err
			}
			creds.Workspaces[url] = credential{User: me.User, Token: tok}
			if err := creds.save(path); err != nil {
				return err
			}
			fmt.Fprintf(env.Stderr, "Logged in to %s as %s (%s); the token is stored in %s\n", url, me.User, me.Role, path)
			return nil
		},
	}
	cmd.Flags().BoolVar(&withToken, "with-token", false, "read the token from stdin (a pipe), as gh auth login --with-token")
	return cmd
}

// readToken reads a token from stdin: without echo on a terminal, whole from a pipe.
func (e *Env) readToken(withToken bool) (string, error) {
	var b []byte
	var err error
	switch {
	case e.stdinTerminal() && !withToken:
		f, ok := e.stdin().(*os.File)
		if !ok {
			return "", errors.New("read the token: stdin is not a file")
		}
		fmt.Fprint(e.Stderr, "Personal API token: ")
		b, err = term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(e.Stderr)
	case withToken:
		b, err = io.ReadAll(io.LimitReader(e.stdin(), 4096))
	default:
		return "", usageError("stdin is not a terminal: pipe the token with --with-token")
	}
	if err != nil {
		return "", fmt.Errorf("read the token: %w", err)
	}
	tok := string(bytes.TrimSpace(b))
	if tok == "" {
		return "", usageError("no token on stdin")
	}
	return tok, nil
}

func newLogoutCmd(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:   "logout",
		Short: "Forget the token stored for a workspace",
		Long: `Remove the token ` + "`hangar login`" + ` stored for --workspace (or $HANGAR_URL). The token stays valid
on the server: revoke it with ` + "`hangar token revoke`" + ` to end it.`,
		Example: "  hangar logout --workspace https://hangar.example.com:8700",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			url, err := env.workspaceURL()
			if err != nil {
				return err
			}
			creds, path, err := loadCredentials()
			if err != nil {
				return err
			}
			if _, ok := creds.Workspaces[url]; !ok {
				fmt.Fprintf(env.Stderr, "Not logged in to %s\n", url)
				return nil
			}
			delete(creds.Workspaces, url)
			if err := creds.save(path); err != nil {
				return err
			}
			fmt.Fprintf(env.Stderr, "Logged out of %s\n", url)
			return nil
		},
	}
}

func newWhoAmICmd(env *Env) *cobra.Command {
	var url string // where the workspace was reached
	return leaf[*api.WhoAmI]{
		Use:     "whoami",
		Short:   "Show the user and role the CLI's credentials stand for",
		Example: "  hangar whoami\n  hangar whoami -o json",
		ask: func(ctx context.Context, c *api.Client, _ []string) (*api.WhoAmI, error) {
			url = c.BaseURL()
			return c.Users.WhoAmI(ctx)
		},
		human: func(w io.Writer, me *api.WhoAmI) error {
			_, err := fmt.Fprintf(w, "%s (%s) at %s\n", me.User, me.Role, url)
			return err
		},
	}.cmd(env)
}

// roleHelp lists the roles for help texts.
var roleHelp = strings.Join(api.Roles, ", ")
