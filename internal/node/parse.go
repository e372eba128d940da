package node

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"

	"github.com/hangar-ml/hangar/internal/compute"
)

// ParseMeminfo returns MemTotal in bytes from /proc/meminfo text.
func ParseMeminfo(text string) (int64, error) {
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("parse MemTotal %q: %w", f[1], err)
			}
			return kb * 1024, nil
		}
	}
	return 0, fmt.Errorf("no MemTotal in meminfo")
}

// ParseOSRelease returns PRETTY_NAME (or NAME VERSION) from /etc/os-release text.
func ParseOSRelease(text string) string {
	vals := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if !ok {
			continue
		}
		vals[k] = strings.Trim(v, `"'`)
	}
	if v := vals["PRETTY_NAME"]; v != "" {
		return v
	}
	return strings.TrimSpace(vals["NAME"] + " " + vals["VERSION"])
}

// ParseNvidiaSMI parses `nvidia-smi --query-gpu=index,name,memory.total,uuid --format=csv,noheader,nounits`.
func ParseNvidiaSMI(text string) ([]compute.GPU, error) {
	var gpus []compute.GPU
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		f := strings.Split(line, ",")
		if len(f) < 2 {
			return nil, fmt.Errorf("nvidia-smi line %q: expected index, name, memory, uuid", line)
		}
		for i := range f {
			f[i] = strings.TrimSpace(f[i])
		}
		idx, err := strconv.Atoi(f[0])
		if err != nil {
			return nil, fmt.Errorf("nvidia-smi line %q: index: %w", line, err)
		}
		g := compute.GPU{Index: idx, Name: f[1]}
		if len(f) > 2 {
			if mib, err := strconv.ParseInt(f[2], 10, 64); err == nil {
				g.MemoryBytes = mib << 20
			}
		}
		if len(f) > 3 {
			g.UUID = f[3]
		}
		gpus = append(gpus, g)
	}
	return gpus, sc.Err()
}
