package supervisor

import (
	"strings"
	"testing"
	"time"
)

func TestCheckpointInterval(t *testing.T) {
	for _, tc := range []struct {
		vars map[string]string
		want time.Duration
		warn string
	}{
		{nil, DefaultCheckpointInterval, ""},
		{map[string]string{CheckpointIntervalVar: "5"}, 5 * time.Second, ""},
		{map[string]string{CheckpointIntervalVar: " 0 "}, 0, ""},
		{map[string]string{CheckpointIntervalVar: "1m"}, DefaultCheckpointInterval, "environment_variables.HANGAR_CHECKPOINT_INTERVAL_SECONDS: \"1m\" is not a number of seconds"},
		{map[string]string{CheckpointIntervalVar: "-3"}, DefaultCheckpointInterval, "is not a number of seconds"},
	} {
		got, warn := checkpointInterval(tc.vars)
		if got != tc.want || (tc.warn == "") != (warn == "") || !strings.Contains(warn, tc.warn) {
			t.Errorf("checkpointInterval(%v) = %s, %q; want %s, %q", tc.vars, got, warn, tc.want, tc.warn)
		}
	}
}
