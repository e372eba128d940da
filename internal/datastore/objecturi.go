package datastore

import (
	"fmt"
	"net/url"
	"path"
	"strings"

	"github.com/hangar-ml/hangar/internal/pattern"
)

// Direct object-store URIs (docs/data.md, "Use object-store data in a job"): a job's input or
// output may name its data in a cloud store by the cloud's own URI instead of a datastore path.
// ParseObjectURI reads them into a Location; the workspace then gives the location the
// credentials and endpoint of its datastore on the same container or bucket, if it has one.

// AzureSuffixes are the storage DNS suffixes of Azure's clouds: the public cloud's, then the
// sovereign clouds' (China, US Government, Germany).
var AzureSuffixes = []string{defaultAzureEP, "core.chinacloudapi.cn", "core.usgovcloudapi.net", "core.cloudapi.de"}

// RunNamePlaceholder stands for the run's name in an output's path (Azure's ${{name}}). An
// output's Location keeps it until the run's name is known: see Location.ForRun.
const RunNamePlaceholder = "${{name}}"

var (
	bucketName    = pattern.New(`^[a-z0-9][a-z0-9._-]{1,220}[a-z0-9]$`)
	containerName = pattern.New(`^(\$root|\$web|[a-z0-9][a-z0-9-]{1,61}[a-z0-9])$`)
	accountName   = pattern.New(`^[a-z0-9]{3,24}$`)
)

// IsObjectURI reports whether s is meant as a direct object-store URI: s3://, gs://, wasb(s)://,
// abfs(s)://, or an http(s) URL of an Azure storage account's blob or dfs endpoint. Other http(s)
// URLs are plain web downloads.
func IsObjectURI(s string) bool {
	scheme, rest, ok := strings.Cut(strings.TrimSpace(s), "://")
	if !ok {
		return false
	}
	switch strings.ToLower(scheme) {
	case "s3", "gs", "wasb", "wasbs", "abfs", "abfss":
		return true
	case "http", "https":
		host, _, _ := strings.Cut(rest, "/")
		_, _, _, ok := azureHost(host)
		return ok
	}
	return false
}

// ParseObjectURI reads a direct object-store URI into a Location without a datastore: its type,
// account (Azure), container or bucket, endpoint (an Azure account's blob endpoint; "" for S3 and
// GCS, whose default is the cloud's own) and a clean relative path ("" for the top; a trailing /
// is dropped). A URI with a query (such as a SAS token) is refused: credentials belong in a
// datastore, where they are sealed, not in a job's spec. Error messages never repeat the query.
func ParseObjectURI(s string) (Location, error) {
	s = strings.TrimSpace(s)
	shown := withoutQuery(s)
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return Location{}, fmt.Errorf("%s: expected s3://, gs://, wasbs://, abfss:// or https://<account>.blob.core.windows.net/...", shown)
	}
	var (
		l   Location
		err error
	)
	switch strings.ToLower(scheme) {
	case "s3":
		l, err = bucketURI(TypeS3, rest)
	case "gs":
		l, err = bucketURI(TypeGCS, rest)
	case "wasb", "wasbs", "abfs", "abfss":
		l, err = hadoopURI(strings.ToLower(scheme), rest)
	case "http", "https":
		l, err = azureURL(s)
	default:
		err = fmt.Errorf("scheme %s: expected s3, gs, wasb, wasbs, abfs, abfss or https", scheme)
	}
	if err != nil {
		return Location{}, fmt.Errorf("%s: %w", shown, err)
	}
	return l, nil
}

// bucketURI reads bucket/path of s3:// and gs:// (the key is taken as written: S3 and GCS keys
// are not URL-encoded in these URIs).
func bucketURI(typ, rest string) (Location, error) {
	bucket, p, _ := strings.Cut(rest, "/")
	if !bucketName.MatchString(bucket) {
		return Location{}, fmt.Errorf("%q is not a bucket name (3 to 222 lowercase letters, digits, '.', '-' and '_')", bucket)
	}
	p, err := cleanObjectPath(p)
	if err != nil {
		return Location{}, err
	}
	return Location{Type: typ, Container: bucket, Path: p}, nil
}

// hadoopURI reads <container>@<account>.blob.<suffix>/<path> (wasb, wasbs) and
// <filesystem>@<account>.dfs.<suffix>/<path> (abfs, abfss).
func hadoopURI(scheme, rest string) (Location, error) {
	if strings.Contains(rest, "?") {
		return Location{}, errQuery
	}
	authority, p, _ := strings.Cut(rest, "/")
	container, host, ok := strings.Cut(authority, "@")
	if !ok {
		return Location{}, fmt.Errorf("expected %s://<container>@<account>.%s.core.windows.net/<path>", scheme, hadoopService(scheme))
	}
	account, service, suffix, ok := azureHost(host)
	if !ok || service != hadoopService(scheme) {
		return Location{}, fmt.Errorf("host %s: expected <account>.%s.<%s>", host, hadoopService(scheme), strings.Join(AzureSuffixes, "|"))
	}
	proto := "http"
	if scheme == "wasbs" || scheme == "abfss" {
		proto = "https"
	}
	return azureLocation(service, account, suffix, proto, container, p)
}

func hadoopService(scheme string) string {
	if strings.HasPrefix(scheme, "abfs") {
		return "dfs"
	}
	return "blob"
}

// azureURL reads http(s)://<account>.blob|dfs.<suffix>/<container>/<path>.
func azureURL(s string) (Location, error) {
	u, err := url.Parse(s)
	if err != nil {
		return Location{}, fmt.Errorf("not a URL")
	}
	if u.RawQuery != "" || u.ForceQuery {
		return Location{}, errQuery
	}
	account, service, suffix, ok := azureHost(u.Host)
	if !ok {
		return Location{}, fmt.Errorf("host %s: expected <account>.blob.<suffix> or <account>.dfs.<suffix> (%s)", u.Host, strings.Join(AzureSuffixes, ", "))
	}
	container, p, _ := strings.Cut(strings.TrimPrefix(u.EscapedPath(), "/"), "/")
	if container == "" {
		return Location{}, fmt.Errorf("expected %s://%s/<container>/<path>", u.Scheme, u.Host)
	}
	return azureLocation(service, account, suffix, strings.ToLower(u.Scheme), container, p)
}

var errQuery = fmt.Errorf("a query (a SAS token?) is not taken in a job's URI: create a datastore with the credentials (hangar datastore create), and the URI gets them")

// azureLocation is an Azure Blob (blob) or ADLS Gen2 (dfs) location, read through the account's
// blob endpoint; p is URL-encoded as it appears in the URI.
func azureLocation(service, account, suffix, proto, container, p string) (Location, error) {
	if !accountName.MatchString(account) {
		return Location{}, fmt.Errorf("%q is not a storage account name (3 to 24 lowercase letters and digits)", account)
	}
	if !containerName.MatchString(container) {
		return Location{}, fmt.Errorf("%q is not a container name (3 to 63 lowercase letters, digits and '-')", container)
	}
	dec, err := url.PathUnescape(p)
	if err != nil {
		return Location{}, fmt.Errorf("path %q: %v", p, err)
	}
	if dec, err = cleanObjectPath(dec); err != nil {
		return Location{}, err
	}
	typ := TypeAzureBlob
	if service == "dfs" {
		typ = TypeADLSGen2
	}
	return Location{Type: typ, Account: account, Container: container, Path: dec,
		Endpoint: proto + "://" + account + ".blob." + suffix}, nil
}

// azureHost splits <account>.<blob|dfs>.<suffix> of one of Azure's clouds.
func azureHost(host string) (account, service, suffix string, ok bool) {
	host = strings.ToLower(host)
	account, rest, found := strings.Cut(host, ".")
	if !found || account == "" {
		return "", "", "", false
	}
	service, suffix, _ = strings.Cut(rest, ".")
	if service != "blob" && service != "dfs" {
		return "", "", "", false
	}
	for _, s := range AzureSuffixes {
		if suffix == s {
			return account, service, suffix, true
		}
	}
	return "", "", "", false
}

// cleanObjectPath checks a path inside a container: relative, slash-separated, without . or ..
// parts or empty parts; a leading or trailing / is dropped.
func cleanObjectPath(p string) (string, error) {
	p = strings.TrimSuffix(strings.TrimPrefix(p, "/"), "/")
	if p == "" {
		return "", nil
	}
	if path.Clean(p) != p || p == ".." || strings.HasPrefix(p, "../") || strings.Contains(p, "\\") {
		return "", fmt.Errorf("%q is not a clean path inside the container (no '.', '..' or empty parts)", p)
	}
	return p, nil
}

func withoutQuery(s string) string {
	if i := strings.IndexByte(s, '?'); i >= 0 {
		return s[:i] + "?…"
	}
	return s
}

// Covers reports whether d, an object-store datastore, holds l's container: the same bucket of
// the same type (S3, GCS), or the same Azure account and container or filesystem (Blob and ADLS
// Gen2 are one storage, so either kind of datastore covers both kinds of URI).
func (l Location) Covers(d Datastore) bool {
	dl := d.Locate("")
	switch l.Type {
	case TypeS3, TypeGCS:
		return d.Type == l.Type && dl.Container == l.Container
	case TypeAzureBlob, TypeADLSGen2:
		return (d.Type == TypeAzureBlob || d.Type == TypeADLSGen2) &&
			strings.EqualFold(d.AccountName, l.Account) && dl.Container == l.Container
	}
	return false
}

// ForRun is the location with the run's name in place of RunNamePlaceholder (an output's path
// keeps it until the run is named).
func (l Location) ForRun(run string) Location {
	l.Path = strings.ReplaceAll(l.Path, RunNamePlaceholder, run)
	return l
}

// azureSuffix is the DNS suffix of the Azure cloud an Azure location's endpoint is in (the
// public cloud's for an emulator's endpoint, or none).
func (l Location) azureSuffix() string {
	u, err := url.Parse(l.Endpoint)
	if err == nil {
		if _, _, suffix, ok := azureHost(u.Host); ok {
			return suffix
		}
	}
	return defaultAzureEP
}
