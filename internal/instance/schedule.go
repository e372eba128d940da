package instance

import (
	"fmt"
	"strings"
	"time"
	_ "time/tzdata" // schedules name zones; a server without /usr/share/zoneinfo still honours them
)

// Action is what a schedule or the idle judgement asks of an instance.
type Action string

// Actions.
const (
	None  Action = ""
	Start Action = "start"
	Stop  Action = "stop"
)

// Schedule is one enabled start or stop schedule (Azure's schedules.compute_start_stop entry,
// a recurrence already turned into its cron expression).
type Schedule struct {
	Action Action
	Cron   Cron
	Zone   *time.Location
	// Name is how messages name it ("stop at 0 18 * * 1-5 (Europe/Berlin)").
	Name string
}

// NewSchedule parses a schedule: its cron expression and its time zone (an IANA name or one
// of the Windows names Azure writes; "" is UTC).
func NewSchedule(action Action, expr, zone string) (Schedule, error) {
	c, err := ParseCron(expr)
	if err != nil {
		return Schedule{}, err
	}
	loc, err := Zone(zone)
	if err != nil {
		return Schedule{}, err
	}
	return Schedule{Action: action, Cron: c, Zone: loc, Name: fmt.Sprintf("%s at %s (%s)", action, c, loc)}, nil
}

// windowsZones maps the Windows time zone names Azure's examples write to IANA names.
var windowsZones = map[string]string{
	"utc":                            "UTC",
	"coordinated universal time":     "UTC",
	"pacific standard time":          "America/Los_Angeles",
	"mountain standard time":         "America/Denver",
	"central standard time":          "America/Chicago",
	"eastern standard time":          "America/New_York",
	"gmt standard time":              "Europe/London",
	"w. europe standard time":        "Europe/Berlin",
	"central europe standard time":   "Europe/Budapest",
	"central european standard time": "Europe/Warsaw",
	"romance standard time":          "Europe/Paris",
	"e. europe standard time":        "Europe/Chisinau",
	"india standard time":            "Asia/Kolkata",
	"china standard time":            "Asia/Shanghai",
	"tokyo standard time":            "Asia/Tokyo",
	"korea standard time":            "Asia/Seoul",
	"singapore standard time":        "Asia/Singapore",
	"aus eastern standard time":      "Australia/Sydney",
	"new zealand standard time":      "Pacific/Auckland",
	"e. south america standard time": "America/Sao_Paulo",
}

// Zone resolves a time zone name: "" and UTC, an IANA name (Europe/Berlin), or a Windows name.
func Zone(name string) (*time.Location, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return time.UTC, nil
	}
	if iana, ok := windowsZones[strings.ToLower(name)]; ok {
		name = iana
	}
	if strings.HasPrefix(name, ".") || strings.Contains(name, "..") {
		return nil, fmt.Errorf("unknown time zone %q", name)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("unknown time zone %q (an IANA name like Europe/Berlin, or a Windows name like Pacific Standard Time)", name)
	}
	return loc, nil
}

// Firing is a schedule that fired, and when.
type Firing struct {
	Schedule Schedule
	At       time.Time
}

// LastFiring is the latest firing of any schedule in (after, upTo]; ties go to the later
// schedule in the list, so that the result does not depend on map order anywhere.
func LastFiring(schedules []Schedule, after, upTo time.Time) (Firing, bool) {
	var best Firing
	found := false
	for _, s := range schedules {
		at, ok := s.Cron.Fired(after, upTo, s.Zone)
		if ok && (!found || !at.Before(best.At)) {
			best, found = Firing{Schedule: s, At: at}, true
		}
	}
	return best, found
}
