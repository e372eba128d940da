package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
)

// object is one object to download and where it goes, relative to the destination.
type object struct {
	key     string
	rel     string // slash-separated, "" for a single file
	size    int64
	version string
}

// objects lists what Download reads, again after a network error, a few times with backoff.
func (b *Bucket) objects(ctx context.Context, file bool, retries int) ([]object, error) {
	for attempt := 0; ; attempt++ {
		objs, err := b.listOnce(ctx, file)
		var oe *Error
		if err == nil || attempt >= retries || !errors.As(err, &oe) || oe.Kind != KindNetwork {
			return objs, err
		}
		if err := sleep(ctx, backoff(attempt)); err != nil {
			return nil, b.classify("list", "", err)
		}
	}
}

// listOnce lists the object at Path (file), or every object under Path/.
func (b *Bucket) listOnce(ctx context.Context, file bool) ([]object, error) {
	if file {
		a, err := b.b.Attributes(ctx, b.loc.Path)
		if err != nil {
			return nil, b.notFound(ctx, "download", b.loc.Path, err)
		}
		return []object{{key: b.loc.Path, size: a.Size, version: attrsVersion(a)}}, nil
	}
	prefix := b.prefix()
	var out []object
	it := b.b.List(&blob.ListOptions{Prefix: prefix})
	for {
		o, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, b.notFound(ctx, "list", "", err)
		}
		if o.IsDir || strings.HasSuffix(o.Key, "/") {
			continue // a folder marker
		}
		rel := strings.TrimPrefix(o.Key, prefix)
		if err := safeRel(rel); err != nil {
			return nil, b.newError("list", o.Key, KindInvalid, err)
		}
		out = append(out, object{key: o.Key, rel: rel, size: o.Size, version: listedVersion(o)})
	}
	if len(out) == 0 {
		if ok, err := b.b.IsAccessible(ctx); err == nil && !ok {
			return nil, b.newError("list", "", KindNoContainer, nil)
		}
		return nil, b.newError("list", "", KindNotFound, fmt.Errorf("no object under %q", prefix))
	}
	return out, checkClashes(out, b)
}

// prefix is the folder prefix of Path: "" for the container's top.
func (b *Bucket) prefix() string {
	p := strings.Trim(b.loc.Path, "/")
	if p == "" {
		return ""
	}
	return p + "/"
}

// notFound classifies err, telling a missing container from a missing object.
func (b *Bucket) notFound(ctx context.Context, op, key string, err error) error {
	e := b.classify(op, key, err)
	var oe *Error
	if errors.As(e, &oe) && (oe.Kind == KindNotFound || gcerrors.Code(err) == gcerrors.NotFound) {
		oe.Kind = KindNotFound
		if ok, aerr := b.b.IsAccessible(ctx); aerr == nil && !ok {
			oe.Kind = KindNoContainer
		}
	}
	return e
}

// safeRel refuses a key that would land outside the destination or nowhere.
func safeRel(rel string) error {
	if rel == "" || path.IsAbs(rel) || strings.Contains(rel, "\\") || strings.ContainsRune(rel, 0) {
		return fmt.Errorf("the key %q cannot be a file's path", rel)
	}
	for _, part := range strings.Split(rel, "/") {
		if part == "" || part == "." || part == ".." {
			return fmt.Errorf("the key %q cannot be a file's path (empty, . or .. part)", rel)
		}
	}
	return nil
}

// checkClashes refuses a listing where one key is both a file and a folder (a and a/b).
func checkClashes(objs []object, b *Bucket) error {
	files := make(map[string]bool, len(objs))
	for _, o := range objs {
		files[o.rel] = true
	}
	for _, o := range objs {
		for d := path.Dir(o.rel); d != "."; d = path.Dir(d) {
			if files[d] {
				return b.newError("list", o.key, KindInvalid, fmt.Errorf("%q is both an object and a folder of %q", d, o.rel))
			}
		}
	}
	return nil
}
