package cli

import (
	"context"
	"fmt"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

func newStudioCmd(env *Env) *cobra.Command {
	var open bool
	cmd := &cobra.Command{
		Use:   "studio",
		Short: "Print (or open) a one-time link that logs a browser into the web studio",
		Long: `The web studio is served by the workspace server at its address. Browsers do not hold the
workspace token: this command asks the server for a one-time login code that expires in two
minutes, and prints a link carrying it. Opening the link logs that browser in for 12 hours
(a session cookie that may read runs, computes and environments, and cancel runs), as the
user whose token asked for the code and with at most that user's role.`,
		Example: "  hangar studio\n  hangar studio --open",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			c, err := env.client(ctx)
			if err != nil {
				return err
			}
			code, err := c.Users.StudioLoginCode(ctx)
			if err != nil {
				return fmt.Errorf("ask for a studio login code: %w", err)
			}
			// The code travels in the fragment: browsers never send it to a server, so it stays
			// out of access logs and Referer headers.
			link := strings.TrimRight(c.BaseURL(), "/") + "/#login=" + code.Code
			fmt.Fprintln(env.Stdout, link)
			fmt.Fprintf(env.Stderr, "This link logs one browser in; it works once, until %s.\n",
				code.ExpiresAt.Local().Format(time.Kitchen))
			if open {
				return openBrowser(ctx, link)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&open, "open", false, "open the link in the default browser")
	return cmd
}

// openBrowser hands url to the system's opener, as an argument (never through a shell).
func openBrowser(ctx context.Context, url string) error {
	name := "xdg-open"
	if runtime.GOOS == "darwin" {
		name = "open"
	}
	if err := exec.CommandContext(ctx, name, url).Start(); err != nil {
		return fmt.Errorf("open the browser with %s: %w (open the link above by hand)", name, err)
	}
	return nil
}
