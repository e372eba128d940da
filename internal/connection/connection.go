package connection

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/hangar-ml/hangar/internal/pattern"
)

// The connection types Hangar reads. S3 is Azure's own type; PostgreSQL is Hangar's (Azure ML
// has no PostgreSQL connection): a database import's source that runs where Hangar runs.
const (
	TypeS3         = "s3"
	TypePostgreSQL = "postgresql"
)

// Types are the supported types, in the order messages name them.
var Types = []string{TypeS3, TypePostgreSQL}

// refused are Azure's connection types that Hangar does not read, with what they are.
var refused = map[string]string{
	"azure_sql_db":       "an Azure SQL database",
	"azuresqldb":         "an Azure SQL database",
	"snowflake":          "a Snowflake database",
	"git":                "a git repository",
	"python_feed":        "a Python package feed",
	"container_registry": "a container registry",
	"azure_blob":         "an Azure blob container (create an azure_blob datastore)",
	"azure_open_ai":      "an Azure OpenAI resource",
	"api_key":            "an API key",
	"custom":             "custom keys",
}

// Supported says which types Hangar takes, for messages.
const Supported = "s3 (an S3 bucket, the source of a file_system import) and postgresql (a PostgreSQL database, the source of a database import)"

// TypeError says why a type is refused, naming what is supported.
func TypeError(t string) error {
	if what, ok := refused[t]; ok {
		return fmt.Errorf("connection type %s (%s) is not supported: Hangar's connections are %s", t, what, Supported)
	}
	return fmt.Errorf("connection type %q is not supported: Hangar's connections are %s", t, Supported)
}

// Credential types, as Azure's connection YAML names them.
const (
	CredAccessKey        = "access_key"
	CredUsernamePassword = "username_password"
)

// Connection is a connection as stored and shown: everything but its credentials' values.
type Connection struct {
	Name        string            `json:"name"`
	Type        string            `json:"type"`
	Target      string            `json:"target"`
	Description string            `json:"description,omitempty"`
	Tags        map[string]string `json:"tags,omitempty"`
	// CredentialType is the kind of the credentials (access_key, username_password); their
	// values are never shown.
	CredentialType string    `json:"credential_type"`
	CreatedAt      time.Time `json:"created_at"`
}

// Credentials are a connection's secrets, sealed at rest with the workspace key and handed only
// to the supervisor of a live import run that names the connection.
type Credentials struct {
	Type            string `json:"type"`
	AccessKeyID     string `json:"access_key_id,omitempty"`
	SecretAccessKey string `json:"secret_access_key,omitempty"`
	Username        string `json:"username,omitempty"`
	Password        string `json:"password,omitempty"`
}

// Values are the secret strings, for redacting them from logs and messages.
func (c Credentials) Values() []string {
	var out []string
	for _, v := range []string{c.SecretAccessKey, c.Password} {
		if v != "" {
			out = append(out, v)
		}
	}
	return out
}

var nameRE = pattern.New(`^[a-zA-Z0-9][a-zA-Z0-9_-]{0,254}$`)

// CheckName says whether name is a connection name.
func CheckName(name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("%q is not a connection name (letters, digits, _ and -, starting with a letter or digit, at most 255)", name)
	}
	return nil
}

// CredentialType is the credentials' type a connection type takes.
func CredentialType(typ string) string {
	if typ == TypeS3 {
		return CredAccessKey
	}
	return CredUsernamePassword
}

// Fault is one problem of a connection, at a field path of its file.
type Fault struct {
	Field string
	Msg   string
}

func (f Fault) Error() string { return f.Field + ": " + f.Msg }

// Check says what is wrong with a connection and its credentials, field by field (nil: nothing).
func Check(c Connection, cred Credentials) []Fault {
	var out []Fault
	add := func(field, format string, args ...any) { out = append(out, Fault{field, fmt.Sprintf(format, args...)}) }
	if err := CheckName(c.Name); err != nil {
		add("name", "%v", err)
	}
	switch c.Type {
	case TypeS3:
		if _, err := ParseS3Target(c.Target); err != nil {
			add("target", "%v", err)
		}
	case TypePostgreSQL:
		if _, err := ParsePostgresTarget(c.Target); err != nil {
			add("target", "%v", err)
		}
	default:
		add("type", "%v", TypeError(c.Type))
		return out
	}
	want := CredentialType(c.Type)
	if cred.Type != want {
		add("credentials.type", "%q: a %s connection takes credentials of type %s", cred.Type, c.Type, want)
		return out
	}
	if want == CredAccessKey {
		if cred.AccessKeyID == "" {
			add("credentials.access_key_id", "required")
		}
		if cred.SecretAccessKey == "" {
			add("credentials.secret_access_key", "required")
		}
	} else {
		if cred.Username == "" {
			add("credentials.username", "required")
		}
		if cred.Password == "" {
			add("credentials.password", "required")
		}
	}
	return out
}

// Ref is the connection a reference names: azureml:<name> or <name>.
func Ref(ref string) string { return strings.TrimPrefix(strings.TrimSpace(ref), "azureml:") }

// PostgresParams are the connection parameters a postgresql target may carry. Others are refused:
// several make the node's PostgreSQL client read files of the node (sslcert, sslkey, sslrootcert,
// passfile, service, servicefile), which an import must not use on a user's behalf.
var PostgresParams = []string{"sslmode", "connect_timeout", "target_session_attrs", "application_name"}

// ParsePostgresTarget checks a postgresql connection's target, postgresql://host[:port]/database
// (postgres:// too), with optional connection parameters (?sslmode=require, PostgresParams). The
// user name and password belong to the credentials, never to the target, which is shown. The host
// is a network host: a Unix socket folder (a host starting with /) would reach the node's own
// databases as the node's user.
func ParsePostgresTarget(target string) (*url.URL, error) {
	const want = "postgresql://host[:port]/database"
	u, err := url.Parse(strings.TrimSpace(target))
	switch {
	case err != nil:
		return nil, fmt.Errorf("%q is not a URL (%s)", target, want)
	case u.Scheme != "postgresql" && u.Scheme != "postgres":
		return nil, fmt.Errorf("%q: expected %s", target, want)
	case u.User != nil:
		return nil, fmt.Errorf("a user or password in the target: give them in credentials (username, password), since the target is shown")
	case u.Host == "" || u.Hostname() == "":
		return nil, fmt.Errorf("%q names no host (%s)", target, want)
	case strings.HasPrefix(u.Hostname(), "/") || strings.Contains(u.Host, ","):
		return nil, fmt.Errorf("%q: expected one network host (%s), not a socket folder or a list", target, want)
	case strings.Trim(u.Path, "/") == "" || strings.Contains(strings.Trim(u.Path, "/"), "/"):
		return nil, fmt.Errorf("%q names no database (%s)", target, want)
	}
	for k := range u.Query() {
		switch strings.ToLower(k) {
		case "user", "password", "passfile", "sslkey", "sslpassword":
			return nil, fmt.Errorf("parameter %s in the target: credentials go in credentials (username, password)", k)
		}
		if !slices.Contains(PostgresParams, k) {
			return nil, fmt.Errorf("parameter %s in the target: expected only %s", k, strings.Join(PostgresParams, ", "))
		}
	}
	return u, nil
}
