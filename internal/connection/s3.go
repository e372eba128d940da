package connection

import (
	"fmt"
	"net/url"
	"path"
	"strings"

	"github.com/hangar-ml/hangar/internal/pattern"

	"github.com/hangar-ml/hangar/internal/datastore"
)

// DefaultRegion is an S3 target's region when its URL does not say one (AWS's
// <bucket>.s3.amazonaws.com, s3://, a bare bucket name, any other S3-compatible server).
const DefaultRegion = "us-east-1"

// S3Target is where an s3 connection points: the server (Endpoint "" is AWS), the bucket, its
// region and a key prefix that a file_system import's path is read under.
type S3Target struct {
	Endpoint string
	Bucket   string
	Region   string
	Prefix   string
}

var (
	bucketRE     = pattern.New(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)
	awsVirtualRE = pattern.New(`^([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])\.s3(?:[.-]([a-z0-9-]+))?\.amazonaws\.com$`)
	awsPathRE    = pattern.New(`^s3(?:[.-]([a-z0-9-]+))?\.amazonaws\.com$`)
)

// ParseS3Target reads an s3 connection's target, as Azure's files write it:
//   - <bucket> or s3://<bucket>[/<prefix>]: a bucket on AWS (us-east-1);
//   - https://<bucket>.s3.<region>.amazonaws.com[/<prefix>] (AWS's virtual-hosted URL; the
//     region is read from it) or https://s3.<region>.amazonaws.com/<bucket>[/<prefix>];
//   - http(s)://<host>[:<port>]/<bucket>[/<prefix>]: a bucket on any other S3-compatible server,
//     addressed path-style.
func ParseS3Target(target string) (S3Target, error) {
	t := strings.TrimSpace(target)
	if t == "" {
		return S3Target{}, fmt.Errorf("required (a bucket, s3://<bucket>/<prefix>, or the bucket's URL)")
	}
	if !strings.Contains(t, "://") {
		t = "s3://" + t
	}
	u, err := url.Parse(t)
	if err != nil || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return S3Target{}, fmt.Errorf("%q is not a bucket or a bucket's URL (s3://<bucket>/<prefix>, https://<bucket>.s3.<region>.amazonaws.com/<prefix>, http(s)://<host>:<port>/<bucket>/<prefix>)", target)
	}
	var out S3Target
	rest := strings.Trim(u.Path, "/")
	host := strings.ToLower(u.Hostname())
	switch {
	case u.Scheme == "s3":
		out = S3Target{Bucket: host, Region: DefaultRegion}
	case u.Scheme != "http" && u.Scheme != "https":
		return S3Target{}, fmt.Errorf("%q: scheme %s; expected s3, https or http", target, u.Scheme)
	case awsVirtualRE.MatchString(host):
		m := awsVirtualRE.FindStringSubmatch(host)
		out = S3Target{Bucket: m[1], Region: orDefault(m[2])}
	case awsPathRE.MatchString(host):
		m := awsPathRE.FindStringSubmatch(host)
		out = S3Target{Region: orDefault(m[1])}
		out.Bucket, rest, _ = strings.Cut(rest, "/")
	default:
		out = S3Target{Endpoint: u.Scheme + "://" + u.Host, Region: DefaultRegion}
		out.Bucket, rest, _ = strings.Cut(rest, "/")
	}
	if !bucketRE.MatchString(out.Bucket) {
		return S3Target{}, fmt.Errorf("%q names no bucket (3 to 63 lowercase letters, digits, . and -)", target)
	}
	if rest != "" {
		if out.Prefix, err = cleanKey(rest); err != nil {
			return S3Target{}, fmt.Errorf("%q: %v", target, err)
		}
	}
	return out, nil
}

func orDefault(region string) string {
	if region == "" || region == "external-1" {
		return DefaultRegion
	}
	return region
}

// cleanKey is a slash path inside a bucket, clean and relative; ".." is refused.
func cleanKey(p string) (string, error) {
	p = strings.Trim(p, "/")
	for _, part := range strings.Split(p, "/") {
		if part == ".." || part == "." {
			return "", fmt.Errorf("path %q: . and .. are not allowed in a key", p)
		}
	}
	return path.Clean(p), nil
}

// Locate is where a file_system import's path (relative to the target's prefix) lies.
func (t S3Target) Locate(p string) (datastore.Location, error) {
	key := t.Prefix
	if p = strings.TrimSpace(p); strings.Trim(p, "/") != "" {
		k, err := cleanKey(p)
		if err != nil {
			return datastore.Location{}, err
		}
		key = path.Join(t.Prefix, k)
	}
	return datastore.Location{Type: datastore.TypeS3, Container: t.Bucket, Endpoint: t.Endpoint, Region: t.Region, Path: key}, nil
}
