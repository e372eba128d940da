package cli

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"

	"github.com/spf13/cobra"
)

// OIDCOptions turn on the studio's OpenID Connect login on `hangar server` (docs/users.md).
type OIDCOptions struct {
	Issuer, ClientID, ClientSecretFile, RedirectURL string
	// ClientSecret is read from ClientSecretFile by check: a secret on the command line would
	// show in ps and in shell history.
	ClientSecret string
}

func (o *OIDCOptions) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.Issuer, "oidc-issuer", "", "OpenID Connect issuer `URL` for the studio's \"Sign in with\" login (off when empty)")
	f.StringVar(&o.ClientID, "oidc-client-id", "", "the studio's client ID at the OpenID Connect issuer")
	f.StringVar(&o.ClientSecretFile, "oidc-client-secret-file", "", "`FILE` holding the studio's client secret at the OpenID Connect issuer")
	f.StringVar(&o.RedirectURL, "oidc-redirect-url", "", "the callback `URL` registered with the issuer (default: the server's URL + /studio/oidc/callback)")
}

// check validates the flags and reads the client secret; all empty means off.
func (o *OIDCOptions) check() error {
	if o.Issuer == "" {
		if o.ClientID != "" || o.ClientSecretFile != "" || o.RedirectURL != "" {
			return usageError("--oidc-client-id, --oidc-client-secret-file and --oidc-redirect-url need --oidc-issuer")
		}
		return nil
	}
	if err := checkIssuerURL("--oidc-issuer", o.Issuer); err != nil {
		return err
	}
	if o.ClientID == "" || o.ClientSecretFile == "" {
		return usageError("--oidc-issuer needs --oidc-client-id and --oidc-client-secret-file")
	}
	if o.RedirectURL != "" {
		if err := checkIssuerURL("--oidc-redirect-url", o.RedirectURL); err != nil {
			return err
		}
	}
	b, err := os.ReadFile(o.ClientSecretFile)
	if err != nil {
		return fmt.Errorf("--oidc-client-secret-file: %w", err)
	}
	o.ClientSecret = strings.TrimSpace(string(b))
	if o.ClientSecret == "" {
		return fmt.Errorf("--oidc-client-secret-file %s: the file is empty", o.ClientSecretFile)
	}
	return nil
}

// checkIssuerURL admits https URLs, and http ones on a loopback host (a local issuer).
func checkIssuerURL(flag, v string) error {
	u, err := url.Parse(v)
	if err != nil || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return usageError("%s: %q is not an absolute URL without query or fragment", flag, v)
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		if ip := net.ParseIP(u.Hostname()); u.Hostname() == "localhost" || (ip != nil && ip.IsLoopback()) {
			return nil
		}
	}
	return usageError("%s: %q must be https (http only on a loopback host)", flag, v)
}
