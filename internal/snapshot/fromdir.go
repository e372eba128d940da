package snapshot

import (
	"context"
	"fmt"

	"github.com/hangar-ml/hangar/internal/blob"
)

// FromDir records the tree at dir with no ignore rules at all and puts
// every file into store, reading each file once. It is how a run's outputs
// are collected. Files that vanish during the walk are left out.
func FromDir(ctx context.Context, dir string, store *blob.Store) (*Manifest, error) {
	abs, err := scanRoot(dir)
	if err != nil {
		return nil, err
	}
	w := &walker{ctx: ctx}
	if err := w.walk(abs, nil, nil); err != nil {
		return nil, fmt.Errorf("collect %s: %w", dir, err)
	}
	put := func(ctx context.Context, j fileJob) (string, int64, bool, error) {
		if err := ctx.Err(); err != nil {
			return "", 0, false, err
		}
		h, n, err := store.PutFile(j.abs)
		return h, n, true, err
	}
	m, _, err := w.finish(put)
	if err != nil {
		return nil, fmt.Errorf("collect %s: %w", dir, err)
	}
	return m, nil
}
