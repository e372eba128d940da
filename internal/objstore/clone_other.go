//go:build !linux

package objstore

import "os"

// cloneFile reports false: only Linux's FICLONE is used; other systems copy.
func cloneFile(dst, src *os.File) bool { return false }
