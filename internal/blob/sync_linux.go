package blob

import (
	"os"

	"golang.org/x/sys/unix"
)

// syncFS flushes the whole file system holding dir to disk (one syncfs call).
func syncFS(dir string, _ []pending) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return unix.Syncfs(int(f.Fd()))
}
