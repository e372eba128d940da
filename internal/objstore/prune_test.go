package objstore

import (
	"slices"
	"testing"
	"time"
)

func TestChoose(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	entry := func(name string, size int64, used time.Duration) cached {
		return cached{Path: name, Size: size, Used: ago(used)}
	}
	temp := func(name string, size int64, used time.Duration) cached {
		return cached{Path: name, Size: size, Used: ago(used), Temp: true}
	}
	rule := func(limit int64) pruneRule { return pruneRule{Limit: limit, Busy: time.Minute, StaleTemp: time.Hour} }
	tests := []struct {
		name  string
		files []cached
		rule  pruneRule
		want  []string
	}{
		{"empty", nil, rule(0), nil},
		{"under the limit: all stay", []cached{entry("a", 10, time.Hour), entry("b", 10, 2*time.Hour)}, rule(20), nil},
		{"over: least recently used first, until it fits",
			[]cached{entry("new", 10, 10*time.Minute), entry("old", 10, 3*time.Hour), entry("mid", 10, time.Hour)}, rule(15),
			[]string{"old", "mid"}},
		{"a big old one may be enough",
			[]cached{entry("small", 1, 2*time.Hour), entry("big", 100, 3*time.Hour), entry("x", 5, time.Hour)}, rule(10),
			[]string{"big"}},
		{"same time: by name", []cached{entry("b", 5, time.Hour), entry("a", 5, time.Hour)}, rule(5), []string{"a"}},
		{"in use (used within Busy) never goes, even over the limit",
			[]cached{entry("busy", 100, 30*time.Second), entry("idle", 10, 2*time.Minute)}, rule(0),
			[]string{"idle"}},
		{"exactly Busy ago is no longer in use", []cached{entry("a", 10, time.Minute)}, rule(0), []string{"a"}},
		{"a live download's half-written object stays and counts",
			[]cached{temp("tmp/live", 50, time.Second), entry("a", 10, time.Hour), entry("b", 10, 2*time.Hour)}, rule(60),
			[]string{"b"}},
		{"a dead download's leftover goes whatever the limit",
			[]cached{temp("tmp/dead", 50, 2*time.Hour), entry("a", 10, time.Hour)}, rule(100),
			[]string{"tmp/dead"}},
		{"no limit: only leftovers",
			[]cached{temp("tmp/dead", 50, 2*time.Hour), entry("a", 1<<40, 100*time.Hour)}, rule(-1),
			[]string{"tmp/dead"}},
		{"leftovers freed first, then entries",
			[]cached{temp("tmp/dead", 50, 2*time.Hour), entry("a", 10, time.Hour), entry("b", 10, 2*time.Hour)}, rule(10),
			[]string{"tmp/dead", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, f := range choose(tt.files, tt.rule, now) {
				got = append(got, f.Path)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("choose = %v, want %v", got, tt.want)
			}
		})
	}
}
