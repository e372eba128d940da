package node

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ProcessStartTime reads a process's start time (clock ticks after boot, /proc/<pid>/stat field
// 22) so that a reused pid is not mistaken for the process; 0 when it is gone or a zombie.
func ProcessStartTime(pid int) uint64 {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 || f[0] == "Z" {
		return 0
	}
	v, _ := strconv.ParseUint(f[19], 10, 64)
	return v
}
