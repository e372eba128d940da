package main

import (
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/hangar-ml/hangar/internal/controller/instances"
)

// instanceOptions reads the instance loop's test knobs (docs/instances.md): how long a minute
// of idle_time_before_shutdown_minutes lasts, and the CPU use that counts as busy.
func instanceOptions(log *slog.Logger) instances.Options {
	var o instances.Options
	if v := os.Getenv("HANGAR_TEST_INSTANCE_MINUTE"); v != "" {
		if d, err := time.ParseDuration(v); err == nil && d > 0 {
			o.Minute, o.Every = d, min(d, 5*time.Second)
			log.Warn("test knob: an instance's idle minute lasts "+d.String(), "env", "HANGAR_TEST_INSTANCE_MINUTE")
		}
	}
	if v := os.Getenv("HANGAR_TEST_INSTANCE_CPU_THRESHOLD"); v != "" {
		if f, err := strconv.ParseFloat(v, 64); err == nil && f > 0 {
			o.CPUThreshold = f
		}
	}
	return o
}
