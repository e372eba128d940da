package dataimport

import (
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"

	"github.com/hangar-ml/hangar/internal/connection"
	"github.com/hangar-ml/hangar/internal/datastore"
	"github.com/hangar-ml/hangar/internal/objstore"
)

// Files copies a file_system source into dir: every object under loc's path (a folder, laid out
// relative to it), or the one object at it (a file, kept under its name), read from the S3
// bucket with the connection's access key through objstore (streamed, resumed after a cut,
// nothing half-written left in dir).
func Files(ctx context.Context, loc datastore.Location, cred connection.Credentials, dir string) (Stats, error) {
	b, err := objstore.Open(ctx, loc, datastore.Credentials{AccessKeyID: cred.AccessKeyID, SecretAccessKey: cred.SecretAccessKey})
	if err != nil {
		return Stats{}, err
	}
	defer b.Close()
	st, err := b.Download(ctx, dir, objstore.DownloadOptions{})
	var oe *objstore.Error
	if errors.As(err, &oe) && oe.Kind == objstore.KindNotFound && loc.Path != "" {
		// Nothing under path/: path may name one object.
		st, err = b.Download(ctx, filepath.Join(dir, path.Base(loc.Path)), objstore.DownloadOptions{File: true})
	}
	if err != nil {
		return Stats{}, err
	}
	if st.Objects == 0 {
		return Stats{}, fmt.Errorf("nothing lies at %s", loc.URI())
	}
	return Stats{Files: st.Objects, Bytes: st.Bytes}, nil
}
