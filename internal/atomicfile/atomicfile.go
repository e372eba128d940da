package atomicfile

import (
	"io"
	"os"
	"path/filepath"
)

// Write makes path hold what fill writes, with mode perm: fill writes a temporary file beside
// path, which is then synced, closed and renamed over path. On any error the temporary file is
// removed and path is left as it was. The folder must exist.
func Write(path string, perm os.FileMode, fill func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	err = fill(f)
	if err == nil {
		err = f.Chmod(perm) // exactly perm: no umask, as for a file made by OpenFile
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}

// WriteFile is Write of data.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	return Write(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}
