package instance

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Cron is a parsed 5-field cron expression (minute hour day-of-month month day-of-week), matched
// against wall-clock time in a location. Day-of-month and day-of-week follow Vixie cron: when
// both are restricted, a day matching either fires.
type Cron struct {
	minute, hour, dom, month, dow uint64 // bit i set: value i matches
	domStar, dowStar              bool
	text                          string
}

type cronField struct {
	name     string
	lo, hi   int
	names    []string // names[i] is value lo+i
	sevenSun bool     // day-of-week: 7 is Sunday too
}

var cronFields = [5]cronField{
	{name: "minute", lo: 0, hi: 59},
	{name: "hour", lo: 0, hi: 23},
	{name: "day of month", lo: 1, hi: 31},
	{name: "month", lo: 1, hi: 12, names: []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}},
	{name: "day of week", lo: 0, hi: 6, names: []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}, sevenSun: true},
}

// ParseCron parses a 5-field cron expression: each field `*`, a value, a range `a-b`, a step
// `*/n` or `a-b/n`, or a comma list of those; months and week days may be named (jan, mon).
func ParseCron(expr string) (Cron, error) {
	parts := strings.Fields(expr)
	if len(parts) != 5 {
		return Cron{}, fmt.Errorf("expected 5 fields (minute hour day-of-month month day-of-week), got %d in %q", len(parts), expr)
	}
	c := Cron{text: strings.Join(parts, " ")}
	dst := [5]*uint64{&c.minute, &c.hour, &c.dom, &c.month, &c.dow}
	for i, p := range parts {
		bits, err := parseCronField(p, cronFields[i])
		if err != nil {
			return Cron{}, fmt.Errorf("%s field %q: %w", cronFields[i].name, p, err)
		}
		*dst[i] = bits
	}
	c.domStar, c.dowStar = parts[2] == "*" || parts[2] == "?", parts[4] == "*" || parts[4] == "?"
	return c, nil
}

// String is the expression as parsed.
func (c Cron) String() string { return c.text }

func parseCronField(s string, f cronField) (uint64, error) {
	var bits uint64
	for _, item := range strings.Split(s, ",") {
		rng, stepText, hasStep := strings.Cut(item, "/")
		step := 1
		if hasStep {
			n, err := strconv.Atoi(stepText)
			if err != nil || n < 1 {
				return 0, fmt.Errorf("step %q: expected a positive integer", stepText)
			}
			step = n
		}
		lo, hi, err := cronRange(rng, f, hasStep)
		if err != nil {
			return 0, err
		}
		for v := lo; v <= hi; v += step {
			bit := v
			if f.sevenSun {
				bit = v % 7 // 7 is Sunday, like 0
			}
			bits |= 1 << uint(bit)
		}
	}
	return bits, nil
}

// cronRange is the values an item's range covers; a single value with a step runs to the top.
func cronRange(rng string, f cronField, stepped bool) (int, int, error) {
	if rng == "*" || rng == "?" {
		return f.lo, f.hi, nil
	}
	a, b, isRange := strings.Cut(rng, "-")
	lo, err := cronValue(a, f)
	if err != nil {
		return 0, 0, err
	}
	hi := lo
	switch {
	case isRange:
		if hi, err = cronValue(b, f); err != nil {
			return 0, 0, err
		}
	case stepped:
		hi = f.hi
	}
	if lo > hi {
		return 0, 0, fmt.Errorf("range %s: start after end", rng)
	}
	return lo, hi, nil
}

func cronValue(s string, f cronField) (int, error) {
	for i, n := range f.names {
		if strings.EqualFold(s, n) {
			return f.lo + i, nil
		}
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	top := f.hi
	if f.sevenSun {
		top = 7
	}
	if v < f.lo || v > top {
		return 0, fmt.Errorf("%d is out of range %d-%d", v, f.lo, f.hi)
	}
	return v, nil
}

// Match says whether the wall-clock minute of t (in t's location) fires.
func (c Cron) Match(t time.Time) bool {
	has := func(bits uint64, v int) bool { return bits&(1<<uint(v)) != 0 }
	if !has(c.minute, t.Minute()) || !has(c.hour, t.Hour()) || !has(c.month, int(t.Month())) {
		return false
	}
	dom, dow := has(c.dom, t.Day()), has(c.dow, int(t.Weekday()))
	switch {
	case c.domStar && c.dowStar:
		return true
	case c.domStar:
		return dow
	case c.dowStar:
		return dom
	default:
		return dom || dow
	}
}

// maxLookback bounds how far back firings are looked for: a server down for days does not
// replay them, it acts on the last day's.
const maxLookback = 24 * time.Hour

// Fired returns the last instant in (after, upTo] at which the expression fires in loc, and
// whether there is one. A wall-clock time that a DST change skips does not fire that day; one
// that it repeats fires once, at its first occurrence.
func (c Cron) Fired(after, upTo time.Time, loc *time.Location) (time.Time, bool) {
	if loc == nil {
		loc = time.UTC
	}
	if upTo.Sub(after) > maxLookback {
		after = upTo.Add(-maxLookback)
	}
	start := after.Truncate(time.Minute)
	for t := upTo.Truncate(time.Minute); t.After(start); t = t.Add(-time.Minute) {
		local := t.In(loc)
		if !c.Match(local) {
			continue
		}
		if prev := t.Add(-time.Hour).In(loc); prev.Hour() == local.Hour() && prev.Minute() == local.Minute() && prev.Day() == local.Day() {
			continue // the second pass over a wall-clock hour that DST repeats
		}
		return t, true
	}
	return time.Time{}, false
}
