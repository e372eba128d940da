//go:build !linux

package blob

import "os"

// syncFS makes the pending files (and dir) durable one by one where syncfs is not available.
func syncFS(dir string, ps []pending) error {
	for _, p := range ps {
		f, err := os.Open(p.tmp)
		if err != nil {
			return err
		}
		err = f.Sync()
		f.Close()
		if err != nil {
			return err
		}
	}
	return syncDir(dir)
}
