package objstore

import (
	"io/fs"
	"os"
	"path/filepath"
)

// place moves the finished staging file or folder to dest. A folder goes whole when dest does not
// exist or is an empty folder; else its files are moved into dest one by one (each whole).
func place(stage, dest string, file, readOnly bool) error {
	if file {
		return os.Rename(stage, dest)
	}
	if err := os.MkdirAll(stage, 0o755); err != nil { // a folder of nothing but markers
		return err
	}
	if entries, err := os.ReadDir(dest); err == nil && len(entries) == 0 {
		if err := os.Remove(dest); err != nil {
			return err
		}
	}
	if _, err := os.Lstat(dest); os.IsNotExist(err) {
		if readOnly {
			if err := lockDirs(stage); err != nil {
				return err
			}
		}
		return os.Rename(stage, dest)
	}
	return filepath.WalkDir(stage, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(stage, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dest, rel)
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		return os.Rename(p, to)
	})
}

// lockDirs takes the write permission from every folder under (and with) root, deepest first.
func lockDirs(root string) error {
	var dirs []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return err
	})
	if err != nil {
		return err
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := os.Chmod(dirs[i], 0o555); err != nil {
			return err
		}
	}
	return nil
}
