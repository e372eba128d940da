//go:build linux

package snapshot

import (
	"io/fs"
	"syscall"
)

func fileKeyOf(fi fs.FileInfo) fileKey {
	k := fileKey{Size: fi.Size(), Mtime: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		k.Ino, k.Dev, k.Ctime = uint64(st.Ino), uint64(st.Dev), st.Ctim.Nano()
	}
	return k
}
