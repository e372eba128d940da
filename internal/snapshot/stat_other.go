//go:build !linux && !darwin

package snapshot

import "io/fs"

// fileKeyOf has only size and mtime here: inode and ctime are not portable.
func fileKeyOf(fi fs.FileInfo) fileKey {
	return fileKey{Size: fi.Size(), Mtime: fi.ModTime().UnixNano()}
}
