package replica

import (
	"reflect"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/store"
)

var t0 = time.Date(2026, 11, 25, 3, 0, 0, 0, time.UTC)

func TestCurrentLeader(t *testing.T) {
	rec := func(id string, leader bool, since, seen time.Duration) store.ServerRecord {
		return store.ServerRecord{ID: id, URL: "http://" + id, Leader: leader, Since: t0.Add(since), Seen: t0.Add(seen)}
	}
	tests := []struct {
		name string
		recs []store.ServerRecord
		want string // "" for none
	}{
		{"none recorded", nil, ""},
		{"followers only", []store.ServerRecord{rec("a", false, 0, 0), rec("b", false, 0, 0)}, ""},
		{"one leader", []store.ServerRecord{rec("a", false, 0, 0), rec("b", true, 0, 0)}, "b"},
		{"a dead leader's record is still live: the one that took the lead last",
			[]store.ServerRecord{rec("old", true, -time.Hour, -5*time.Second), rec("new", true, -time.Second, 0)}, "new"},
		{"a stale leader record does not count", []store.ServerRecord{rec("a", true, -time.Hour, -Live-time.Second)}, ""},
		{"a tie goes to the larger id, the same on every server",
			[]store.ServerRecord{rec("a", true, 0, 0), rec("b", true, 0, 0)}, "b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := CurrentLeader(tt.recs, t0)
			if ok != (tt.want != "") || got.ID != tt.want {
				t.Errorf("CurrentLeader = %q, %v; want %q", got.ID, ok, tt.want)
			}
		})
	}
}

func TestNodeURLs(t *testing.T) {
	recs := []store.ServerRecord{
		{ID: "c", URL: "http://c", Seen: t0},
		{ID: "self", URL: "http://self", Seen: t0},
		{ID: "b", URL: "http://b", Seen: t0.Add(-Live)},           // just live
		{ID: "gone", URL: "http://gone", Seen: t0.Add(-Live - 1)}, // stale
		{ID: "b2", URL: "http://b", Seen: t0},                     // the same address again (a restart)
		{ID: "noaddr", Seen: t0},
	}
	if got, want := NodeURLs("http://self", recs, t0), "http://self,http://b,http://c"; got != want {
		t.Errorf("NodeURLs = %q, want %q", got, want)
	}
	if got := NodeURLs("http://self", nil, t0); got != "http://self" {
		t.Errorf("NodeURLs alone = %q", got)
	}
}

func TestStale(t *testing.T) {
	recs := []store.ServerRecord{{ID: "a", Seen: t0}, {ID: "b", Seen: t0.Add(-10*Live - 1)}, {ID: "c", Seen: t0.Add(-10 * Live)}}
	if got := Stale(recs, t0); !reflect.DeepEqual(got, []string{"b"}) {
		t.Errorf("Stale = %v", got)
	}
}

// A server whose clock runs an hour ahead of the database's judges the records (timed by the
// database) on its own clock: the live leader stays live, Since is left as it is.
func TestOnOwnClock(t *testing.T) {
	recs := []store.ServerRecord{{ID: "a", Leader: true, Since: t0.Add(-time.Minute), Seen: t0}}
	skew := -time.Hour // the database's clock minus this server's
	own := OnOwnClock(recs, skew)
	if want := t0.Add(time.Hour); !own[0].Seen.Equal(want) || !own[0].Since.Equal(recs[0].Since) {
		t.Fatalf("OnOwnClock = %+v; want Seen %s, Since unchanged", own[0], want)
	}
	if !recs[0].Seen.Equal(t0) {
		t.Error("OnOwnClock changed its input")
	}
	if l, ok := CurrentLeader(own, t0.Add(time.Hour+time.Second)); !ok || l.ID != "a" {
		t.Errorf("on this server's clock the leader is %q, %v; want a", l.ID, ok)
	}
	if _, ok := CurrentLeader(recs, t0.Add(time.Hour+time.Second)); ok {
		t.Error("the records as written count on a clock an hour ahead: the test shows nothing")
	}
}
