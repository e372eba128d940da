package instance

import (
	"strings"
	"testing"
	"time"
)

func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := Zone(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func TestParseCronErrors(t *testing.T) {
	for _, tc := range []struct{ expr, want string }{
		{"0 18 * *", "expected 5 fields"},
		{"60 18 * * *", "minute field \"60\": 60 is out of range 0-59"},
		{"0 25 * * *", "hour field"},
		{"0 18 * * funday", "day of week field"},
		{"0 18 5-1 * *", "start after end"},
		{"*/0 * * * *", "step \"0\""},
	} {
		_, err := ParseCron(tc.expr)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseCron(%q) = %v, want an error with %q", tc.expr, err, tc.want)
		}
	}
}

func TestCronMatch(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse("2006-01-02 15:04", s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, tc := range []struct {
		expr, at string
		want     bool
	}{
		{"0 18 * * *", "2025-03-03 18:00", true},
		{"0 18 * * *", "2025-03-03 18:01", false},
		{"0 18 * * mon-fri", "2025-03-03 18:00", true},  // a Monday
		{"0 18 * * mon-fri", "2025-03-08 18:00", false}, // a Saturday
		{"0 18 * * 1-7", "2025-03-09 18:00", true},      // 7 is Sunday
		{"0 8 * * 0", "2025-03-09 08:00", true},
		{"*/15 * * * *", "2025-03-03 10:45", true},
		{"*/15 * * * *", "2025-03-03 10:46", false},
		{"0 0 1 jan *", "2025-01-01 00:00", true},
		{"0 0 1 * mon", "2025-03-03 00:00", true},   // either day field: a Monday
		{"0 0 15 * mon", "2025-03-04 00:00", false}, // neither
		{"30 9,17 * * *", "2025-03-04 17:30", true},
	} {
		c, err := ParseCron(tc.expr)
		if err != nil {
			t.Fatalf("%s: %v", tc.expr, err)
		}
		if got := c.Match(at(tc.at)); got != tc.want {
			t.Errorf("%q at %s: got %v, want %v", tc.expr, tc.at, got, tc.want)
		}
	}
}

// Berlin's clocks go 02:00 → 03:00 on 2025-03-30 and 03:00 → 02:00 on 2025-10-26.
func TestCronFiredAcrossDST(t *testing.T) {
	berlin := mustZone(t, "W. Europe Standard Time")
	local := func(y int, m time.Month, d, h, min int) time.Time { return time.Date(y, m, d, h, min, 0, 0, berlin) }
	for _, tc := range []struct {
		name, expr  string
		after, upTo time.Time
		want        time.Time // zero: none
	}{
		{"18:00 before the change is 17:00 UTC", "0 18 * * *", local(2025, 3, 29, 12, 0), local(2025, 3, 29, 23, 0),
			time.Date(2025, 3, 29, 17, 0, 0, 0, time.UTC)},
		{"18:00 after the change is 16:00 UTC", "0 18 * * *", local(2025, 3, 30, 12, 0), local(2025, 3, 30, 23, 0),
			time.Date(2025, 3, 30, 16, 0, 0, 0, time.UTC)},
		{"a skipped wall-clock time does not fire", "30 2 * * *", time.Date(2025, 3, 29, 23, 0, 0, 0, time.UTC),
			time.Date(2025, 3, 30, 3, 0, 0, 0, time.UTC), time.Time{}},
		{"a repeated wall-clock time fires at its first pass", "30 2 * * *", time.Date(2025, 10, 25, 23, 0, 0, 0, time.UTC),
			time.Date(2025, 10, 26, 3, 0, 0, 0, time.UTC), time.Date(2025, 10, 26, 0, 30, 0, 0, time.UTC)},
		{"the window's end is included", "0 18 * * *", local(2025, 3, 3, 17, 0), local(2025, 3, 3, 18, 0),
			local(2025, 3, 3, 18, 0).UTC()},
		{"the window's start is not", "0 18 * * *", local(2025, 3, 3, 18, 0), local(2025, 3, 3, 19, 0), time.Time{}},
		{"a long outage looks back one day", "0 18 * * *", local(2025, 3, 1, 0, 0), local(2025, 3, 10, 12, 0),
			local(2025, 3, 9, 18, 0).UTC()},
	} {
		c, err := ParseCron(tc.expr)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := c.Fired(tc.after, tc.upTo, berlin)
		if ok != !tc.want.IsZero() || !got.Equal(tc.want) {
			t.Errorf("%s: got %v %v, want %v", tc.name, got.UTC(), ok, tc.want)
		}
	}
}

func TestZone(t *testing.T) {
	for name, want := range map[string]string{
		"": "UTC", "UTC": "UTC", "Pacific Standard Time": "America/Los_Angeles", "Europe/Berlin": "Europe/Berlin",
	} {
		if got := mustZone(t, name).String(); got != want {
			t.Errorf("Zone(%q) = %s, want %s", name, got, want)
		}
	}
	for _, bad := range []string{"Mars/Olympus", "../../etc/passwd"} {
		if _, err := Zone(bad); err == nil {
			t.Errorf("Zone(%q) gave no error", bad)
		}
	}
}
