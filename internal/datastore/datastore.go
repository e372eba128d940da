package datastore

import (
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hangar-ml/hangar/internal/pattern"
)

// WorkspaceBlobStore is the workspace's own datastore, always present.
const WorkspaceBlobStore = "workspaceblobstore"

// Datastore types. TypeWorkspace is workspaceblobstore's (the workspace's blob store);
// TypeLocalFolder is Hangar's own, for a folder on a shared filesystem.
const (
	TypeWorkspace   = "workspace_blob"
	TypeLocalFolder = "local_folder"
)

// DefaultComputes are the compute targets whose nodes mount a local_folder datastore when its
// file lists none: the server's own machine.
var DefaultComputes = []string{"local"}

// Datastore is a registered datastore (or the built-in workspaceblobstore).
type Datastore struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Description string `json:"description,omitempty"`
	// Path is a local_folder's absolute folder, the same on every node that mounts it.
	Path string `json:"path,omitempty"`
	// Computes are the compute targets whose nodes mount Path (local_folder only).
	Computes []string `json:"computes,omitempty"`
	// Object stores (cloud.go). Azure: AccountName, ContainerName (azure_blob) or Filesystem
	// (azure_data_lake_gen2), Endpoint (the DNS suffix, core.windows.net by default, or an
	// emulator's full URL) and Protocol (https by default). S3 and GCS: Bucket, EndpointURL (an
	// S3-compatible server's or a GCS emulator's URL; empty for AWS's and Google's), Region.
	AccountName   string `json:"account_name,omitempty"`
	ContainerName string `json:"container_name,omitempty"`
	Filesystem    string `json:"filesystem,omitempty"`
	Endpoint      string `json:"endpoint,omitempty"`
	Protocol      string `json:"protocol,omitempty"`
	Bucket        string `json:"bucket,omitempty"`
	EndpointURL   string `json:"endpoint_url,omitempty"`
	Region        string `json:"region,omitempty"`
	// CredentialKind says which credentials the datastore holds (Credentials.Kind), shown in
	// place of them; "" is the node's ambient identity. The credentials are stored sealed apart.
	CredentialKind string `json:"credential_kind,omitempty"`
	// LastUsedBy is the last run whose supervisor fetched the credentials, at LastUsedAt.
	LastUsedBy string            `json:"last_used_by,omitempty"`
	LastUsedAt time.Time         `json:"last_used_at,omitzero"`
	Tags       map[string]string `json:"tags,omitempty"`
	CreatedAt  time.Time         `json:"created_at"`
	// Builtin marks workspaceblobstore, which cannot be created or replaced.
	Builtin bool `json:"builtin,omitempty"`
}

// Workspace is the built-in workspaceblobstore.
func Workspace() Datastore {
	return Datastore{Name: WorkspaceBlobStore, Type: TypeWorkspace, Builtin: true,
		Description: "the workspace's own blob store: uploads and job outputs"}
}

// Mounts reports whether nodes of the compute target named see the datastore's folder.
func (d Datastore) Mounts(compute string) bool {
	cs := d.Computes
	if len(cs) == 0 {
		cs = DefaultComputes
	}
	return slices.Contains(cs, compute)
}

// LocalPath is where p (a clean relative path, see ParseURI) lies in a local_folder datastore.
func (d Datastore) LocalPath(p string) string {
	return filepath.Join(d.Path, filepath.FromSlash(p))
}

var nameRE = pattern.New(`^[A-Za-z0-9][A-Za-z0-9_-]{0,254}$`)

// CheckName says what is wrong with a datastore name, or returns nil. Azure's example files
// name datastores with hyphens (blob-example), so a hyphen is taken after the first character.
func CheckName(name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("%q is not a datastore name (letters, digits, _ and -, starting with a letter or digit, at most 255)", name)
	}
	return nil
}

// Check says what is wrong with a datastore to create, or returns nil. Each message starts with
// the field's path.
func Check(d Datastore) error {
	if err := CheckName(d.Name); err != nil {
		return fmt.Errorf("name: %w", err)
	}
	if d.Name == WorkspaceBlobStore {
		return fmt.Errorf("name: %s is the workspace's own datastore and cannot be replaced", d.Name)
	}
	switch {
	case IsObjectType(d.Type):
		return checkObject(d)
	case d.Type != TypeLocalFolder:
		return RefusedTypeError(d.Type)
	}
	if err := absent(d.Type, map[string]string{"account_name": d.AccountName, "container_name": d.ContainerName, "filesystem": d.Filesystem,
		"endpoint": d.Endpoint, "protocol": d.Protocol, "bucket": d.Bucket, "endpoint_url": d.EndpointURL, "region": d.Region}); err != nil {
		return err
	}
	if !filepath.IsAbs(d.Path) || filepath.Clean(d.Path) != d.Path {
		return fmt.Errorf("path %q: expected a clean absolute folder path (the same on every node that mounts it)", d.Path)
	}
	return nil
}

// URI is a parsed azureml://datastores/<datastore>/paths/<path>.
type URI struct {
	Datastore string
	// Path is clean, relative, slash-separated; "" is the datastore's top.
	Path string
}

func (u URI) String() string {
	return "azureml://datastores/" + u.Datastore + "/paths/" + u.Path
}

// IsURI reports whether s is meant as a datastore URI.
func IsURI(s string) bool {
	return strings.HasPrefix(strings.ToLower(strings.TrimSpace(s)), "azureml://datastores/")
}

// ParseURI reads azureml://datastores/<datastore>/paths/<path>. The path may end with / (a
// folder, as Azure writes it) and may not leave the datastore.
func ParseURI(s string) (URI, error) {
	rest, ok := cutPrefixFold(strings.TrimSpace(s), "azureml://datastores/")
	if !ok {
		return URI{}, fmt.Errorf("%s: expected azureml://datastores/<datastore>/paths/<path>", s)
	}
	ds, p, ok := strings.Cut(rest, "/paths/")
	if !ok {
		if ds, ok = strings.CutSuffix(rest, "/paths"); !ok {
			return URI{}, fmt.Errorf("%s: expected azureml://datastores/<datastore>/paths/<path>", s)
		}
	}
	if err := CheckName(ds); err != nil {
		return URI{}, fmt.Errorf("%s: %w", s, err)
	}
	p = strings.Trim(p, "/")
	if p != "" && (path.Clean(p) != p || p == ".." || strings.HasPrefix(p, "../") || strings.Contains(p, "\\")) {
		return URI{}, fmt.Errorf("%s: %q is not a clean path inside the datastore", s, p)
	}
	return URI{Datastore: ds, Path: p}, nil
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) < len(prefix) || !strings.EqualFold(s[:len(prefix)], prefix) {
		return s, false
	}
	return s[len(prefix):], true
}

// Entry is a path written in workspaceblobstore: an upload's manifest, or a job's output (Run
// and Output, whose manifest is known once the job has finished).
type Entry struct {
	Datastore string    `json:"datastore"`
	Path      string    `json:"path"`
	Manifest  string    `json:"manifest,omitempty"`
	Run       string    `json:"run,omitempty"`
	Output    string    `json:"output,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// Prefixes are p and every folder above it, longest first: the entries that may hold p.
func Prefixes(p string) []string {
	var out []string
	for q := p; q != "" && q != "."; q = path.Dir(q) {
		out = append(out, q)
	}
	return out
}

// Find picks the entry that holds p: the one at the longest prefix of p, newest first when two
// were written at one path. It returns the entry and p's path inside it ("" for the entry itself).
func Find(entries []Entry, p string) (Entry, string, bool) {
	var best Entry
	found := false
	for _, e := range entries {
		if e.Path != p && !strings.HasPrefix(p, e.Path+"/") {
			continue
		}
		if !found || len(e.Path) > len(best.Path) || (len(e.Path) == len(best.Path) && e.CreatedAt.After(best.CreatedAt)) {
			best, found = e, true
		}
	}
	if !found {
		return Entry{}, "", false
	}
	return best, strings.TrimPrefix(strings.TrimPrefix(p, best.Path), "/"), true
}

// UploadPath is where an upload of a local file or folder is written in workspaceblobstore, as
// Azure lays it out (LocalUpload/<id>/<name>); the id is the manifest's hash, so uploading the
// same files twice writes one path.
func UploadPath(manifest, localPath string) string {
	id := manifest
	if len(id) > 32 {
		id = id[:32]
	}
	base := path.Base(strings.TrimRight(filepath.ToSlash(localPath), "/"))
	if base == "." || base == "/" || base == "" || base == ".." {
		base = "data"
	}
	return "LocalUpload/" + id + "/" + base
}

// JobOutputPath reads Azure's default output location, azureml/<job>/<output>[/<path>], which
// names a job's output without anything being written there.
func JobOutputPath(p string) (run, output, sub string, ok bool) {
	parts := strings.SplitN(p, "/", 4)
	if len(parts) < 3 || parts[0] != "azureml" || parts[1] == "" || parts[2] == "" {
		return "", "", "", false
	}
	if len(parts) == 4 {
		sub = parts[3]
	}
	return parts[1], parts[2], sub, true
}
