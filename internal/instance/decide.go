package instance

import (
	"fmt"
	"strings"
	"time"
)

// State is where an instance is in its life:
//
//	          start                node ready, startup script done
//	Stopped ────────► Starting ─────────────────────────────► Running
//	   ▲                 │ a setup script fails                  │ stop (user, schedule, idle)
//	   │                 ▼                                       ▼
//	   │              Failed ──start──► Starting             Stopping
//	   └──────────────────────────── node gone ◄─────────────────┘
//
// Every state carries a reason (who or what moved it there).
type State string

// States.
const (
	Starting State = "Starting"
	Running  State = "Running"
	Stopping State = "Stopping"
	Stopped  State = "Stopped"
	Failed   State = "Failed"
)

// Wants says whether the instance should have its node in state s.
func (s State) Wants() bool { return s == Starting || s == Running }

// Signals are what says an instance is in use, as last seen.
type Signals struct {
	// Jobs are the active runs on the instance (its own setup scripts included).
	Jobs []string
	// ReportedAt is when the node's agent last reported the signals below; zero: never.
	ReportedAt     time.Time
	SSHSessions    int
	JupyterKernels int
	CPUPercent     float64
	// GPUPercent is the busiest GPU's use; HasGPU says whether the node has one.
	GPUPercent float64
	HasGPU     bool
}

// Defaults of Settings.
const (
	DefaultCPUThreshold = 10.0 // percent of all cores
	DefaultGPUThreshold = 10.0 // percent of the busiest GPU
	// StaleAfter is how old an agent's report may be and still count: older, the instance's
	// use is unknown and it is not judged idle.
	StaleAfter = 3 * time.Minute
)

// Settings are an instance's idle-shutdown settings.
type Settings struct {
	// IdleMinutes is idle_time_before_shutdown_minutes; 0: never stops by itself.
	IdleMinutes int
	// Minute is how long a minute of IdleMinutes lasts: time.Minute, except under Hangar's
	// documented test knob (docs/instances.md).
	Minute                     time.Duration
	CPUThreshold, GPUThreshold float64
}

func (s Settings) withDefaults() Settings {
	if s.Minute <= 0 {
		s.Minute = time.Minute
	}
	if s.CPUThreshold <= 0 {
		s.CPUThreshold = DefaultCPUThreshold
	}
	if s.GPUThreshold <= 0 {
		s.GPUThreshold = DefaultGPUThreshold
	}
	return s
}

// Input is an instance as the controller last saw it.
type Input struct {
	Now   time.Time
	State State
	// ActiveAt is when the instance was last seen in use (or started); idle time runs from it.
	ActiveAt time.Time
	// CheckedTo is the time up to which schedules were acted on; zero: never (none fire
	// retroactively).
	CheckedTo time.Time
	Signals   Signals
	Settings  Settings
	Schedules []Schedule
	// Deferred is a scheduled stop that fired while jobs ran and waits for them to end (the
	// Decision's, stored by the controller); zero: none.
	Deferred Deferred
}

// Deferred is a scheduled stop put off until the instance's jobs end.
type Deferred struct {
	Schedule string    `json:"schedule"` // the schedule's Name
	At       time.Time `json:"at"`       // when it fired
}

// IsZero reports whether no stop is deferred.
func (d Deferred) IsZero() bool { return d.At.IsZero() }

func (d Deferred) fired() string {
	return fmt.Sprintf("schedule %q fired at %s", d.Schedule, d.At.Format("2006-01-02 15:04 MST"))
}

// Decision is what to do with an instance now, and why.
type Decision struct {
	Action Action
	// Reason says why Action (empty with None), or why a schedule did not act.
	Reason string
	// Idle is the judgement compute show prints: "busy: job X", "idle for 12 of 30 minutes: ...".
	Idle string
	// ActiveAt and CheckedTo are the Input's, moved on: the controller stores them.
	ActiveAt, CheckedTo time.Time
	// Deferred is the stop still deferred after this decision (zero: none), to store.
	Deferred Deferred
}

// Decide judges an instance's use and its schedules. A schedule that fired since CheckedTo wins
// over idleness (the latest firing when several did). A scheduled stop that fires while jobs run
// on the instance is deferred until they end, with the reason, unless a scheduled start fires
// first (the instance is then wanted again); an idle shutdown stops a Running instance unused
// for IdleMinutes.
func Decide(in Input) Decision {
	set := in.Settings.withDefaults()
	d := Decision{ActiveAt: in.ActiveAt, CheckedTo: in.Now}
	if in.State.Wants() {
		d.Deferred = in.Deferred // a stopped instance has nothing left to stop
	}
	busy, quiet := judge(in.Signals, in.Now, set)
	if len(busy) > 0 || d.ActiveAt.IsZero() || !in.State.Wants() {
		d.ActiveAt = in.Now // a stopped instance's idle time starts again when it starts
	}
	idleFor := in.Now.Sub(d.ActiveAt)
	d.Idle = idleText(in.State, busy, quiet, idleFor, set)
	if !in.CheckedTo.IsZero() {
		if f, ok := LastFiring(in.Schedules, in.CheckedTo, in.Now); ok {
			if act, why, put := scheduled(f, in.State, in.Signals.Jobs); act != None || why != "" {
				d.Action, d.Reason, d.Deferred = act, why, put
				return d
			}
			if f.Schedule.Action == Start && !d.Deferred.IsZero() {
				d.Reason = fmt.Sprintf("the stop deferred since %s was dropped: schedule %q fired at %s first",
					d.Deferred.At.Format("2006-01-02 15:04 MST"), f.Schedule.Name, f.At.In(f.Schedule.Zone).Format("2006-01-02 15:04 MST"))
				d.Deferred = Deferred{}
				return d
			}
		}
	}
	if !d.Deferred.IsZero() {
		if jobs := in.Signals.Jobs; len(jobs) > 0 {
			d.Reason = d.Deferred.fired() + ": stop deferred: job " + jobs[0] + " running"
			return d
		}
		d.Action, d.Reason = Stop, d.Deferred.fired()+": stop deferred until its jobs ended"
		d.Deferred = Deferred{}
		return d
	}
	if in.State == Running && set.IdleMinutes > 0 && len(busy) == 0 && idleFor >= time.Duration(set.IdleMinutes)*set.Minute {
		d.Action, d.Reason = Stop, "idle shutdown: "+d.Idle
	}
	return d
}

// scheduled is what a schedule's firing does in state: a start of a stopped (or failed)
// instance, a stop of a wanted one without jobs; a stop of one with jobs is deferred (returned,
// with the reason); else nothing.
func scheduled(f Firing, state State, jobs []string) (Action, string, Deferred) {
	at := f.At.In(f.Schedule.Zone).Format("2006-01-02 15:04 MST")
	switch {
	case f.Schedule.Action == Start && (state == Stopped || state == Failed || state == Stopping):
		return Start, fmt.Sprintf("schedule %q fired at %s", f.Schedule.Name, at), Deferred{}
	case f.Schedule.Action == Stop && state.Wants() && len(jobs) > 0:
		d := Deferred{Schedule: f.Schedule.Name, At: f.At.In(f.Schedule.Zone)}
		return None, d.fired() + ": stop deferred: job " + jobs[0] + " running", d
	case f.Schedule.Action == Stop && state.Wants():
		return Stop, fmt.Sprintf("schedule %q fired at %s", f.Schedule.Name, at), Deferred{}
	}
	return None, "", Deferred{}
}

// judge lists what makes the instance busy, and what was found quiet.
func judge(s Signals, now time.Time, set Settings) (busy, quiet []string) {
	if len(s.Jobs) > 0 {
		busy = append(busy, "job "+strings.Join(s.Jobs, ", job "))
	} else {
		quiet = append(quiet, "no job")
	}
	switch {
	case s.ReportedAt.IsZero():
		return append(busy, "no activity report from its node yet"), quiet
	case now.Sub(s.ReportedAt) > StaleAfter:
		return append(busy, fmt.Sprintf("no activity report from its node since %s", s.ReportedAt.UTC().Format(time.RFC3339))), quiet
	}
	count := func(n int, what string) {
		switch {
		case n == 1:
			busy = append(busy, "1 "+what)
		case n > 1:
			busy = append(busy, fmt.Sprintf("%d %ss", n, what))
		default:
			quiet = append(quiet, "no "+what)
		}
	}
	count(s.SSHSessions, "SSH session")
	count(s.JupyterKernels, "Jupyter kernel")
	use := func(name string, pct, limit float64) {
		text := fmt.Sprintf("%s %.1f %%", name, pct)
		if pct >= limit {
			busy = append(busy, text)
		} else {
			quiet = append(quiet, text)
		}
	}
	use("CPU", s.CPUPercent, set.CPUThreshold)
	if s.HasGPU {
		use("GPU", s.GPUPercent, set.GPUThreshold)
	}
	return busy, quiet
}

// idleText is the judgement as compute show prints it.
func idleText(state State, busy, quiet []string, idleFor time.Duration, set Settings) string {
	switch {
	case !state.Wants():
		return strings.ToLower(string(state))
	case len(busy) > 0:
		return "busy: " + strings.Join(busy, ", ")
	}
	minutes := int(idleFor / set.Minute)
	if set.IdleMinutes == 0 {
		return fmt.Sprintf("idle for %d minutes (idle shutdown is off): %s", minutes, strings.Join(quiet, ", "))
	}
	return fmt.Sprintf("idle for %d of %d minutes: %s", min(minutes, set.IdleMinutes), set.IdleMinutes, strings.Join(quiet, ", "))
}
