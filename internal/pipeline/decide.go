package pipeline

import (
	"fmt"
	"strings"

	"github.com/hangar-ml/hangar/internal/job"
)

// Pipeline statuses Decision.Status takes once Done.
const (
	StatusCompleted = "Completed"
	StatusFailed    = "Failed"
	StatusCanceled  = "Canceled"
)

// Decide says what to do now. A step starts once every step it reads from has Completed (a
// reused step counts). A step that reads from a Failed, Canceled or Skipped step is skipped,
// and so is everything downstream of it, in this one decision, each reason naming the
// producer ("prep failed"). A step that did not complete stops the pipeline unless
// continue_on_step_failure is set (Azure's semantics): queued and running steps are canceled,
// steps not started are skipped and nothing starts; with it set, branches that do not read
// from the failure go on. Canceling cancels every queued or running step and skips the rest.
// The pipeline is Done once nothing is queued or running and nothing can start: Completed
// when every step completed, otherwise Failed (or Canceled when it was canceled, or when no
// step failed but one was canceled), the reason naming every step that failed, then those
// canceled and skipped ("step train failed; score skipped").
//
// Decide reads only its arguments, so a restarted server that stored each step's state
// decides the same; every list is in Order's order.
func Decide(p job.PipelineRun, st State) Decision {
	order := Order(p)
	if err := Check(p); err != nil {
		// The decoder checks the graph at create; a stored graph that fails here cannot run.
		d := Decision{Cancel: active(order, st.Steps)}
		if len(d.Cancel) == 0 {
			d.Done, d.Status, d.Reason = true, StatusFailed, err.Error()
		}
		return d
	}
	deps := Deps(p)
	// now is st.Steps with this decision's skips applied; failed has only the skips that
	// follow from a step that did not complete, so a step skipped because the pipeline stops
	// gives the stop as its reason rather than "<producer> skipped".
	now := make(map[string]StepState, len(order))
	failed := make(map[string]StepState, len(order))
	for _, name := range order {
		now[name], failed[name] = st.Steps[name], st.Steps[name]
	}
	var d Decision
	halt := haltReason(p, st, order)
	skip := func(name, reason string) {
		d.Skip = append(d.Skip, Skip{Step: name, Reason: reason})
		now[name] = Skipped
	}
	for _, name := range order {
		if now[name] != NotStarted {
			continue
		}
		switch reason := blockedBy(deps[name], failed); {
		case st.Canceling:
			skip(name, halt)
		case reason != "":
			skip(name, reason)
			failed[name] = Skipped
		case halt != "":
			skip(name, halt)
		case allCompleted(deps[name], now):
			d.Start = append(d.Start, name)
		}
	}
	if halt != "" {
		d.Cancel = active(order, now)
	}
	if len(d.Start) == 0 && len(active(order, now)) == 0 {
		d.Done = true
		d.Status, d.Reason = outcome(order, now, st.Canceling)
	}
	return d
}

// haltReason says why no step may start any more ("" when steps may): the pipeline is being
// canceled, or a step did not complete and continue_on_step_failure is off.
func haltReason(p job.PipelineRun, st State, order []string) string {
	if st.Canceling {
		return "pipeline canceled"
	}
	if p.Settings.ContinueOnStepFailure {
		return ""
	}
	// A failure is named before a cancel: the steps this pipeline cancels after a failure
	// must not take its place in the reason.
	for _, bad := range []StepState{Failed, Canceled} {
		for _, name := range order {
			if st.Steps[name] == bad {
				return fmt.Sprintf("step %s %s and continue_on_step_failure is false", name, bad)
			}
		}
	}
	return ""
}

// blockedBy names the producers that will never complete ("prep failed, aux skipped"), or "".
func blockedBy(producers []string, now map[string]StepState) string {
	var why []string
	for _, producer := range producers {
		switch s := now[producer]; s {
		case Failed, Canceled, Skipped:
			why = append(why, producer+" "+string(s))
		}
	}
	return strings.Join(why, ", ")
}

func allCompleted(producers []string, now map[string]StepState) bool {
	for _, producer := range producers {
		if now[producer] != Completed {
			return false
		}
	}
	return true
}

// active lists the queued and running steps in order. A state this package does not know
// counts as running: waiting on it is safe, ending the pipeline under it is not.
func active(order []string, steps map[string]StepState) []string {
	var out []string
	for _, name := range order {
		switch steps[name] {
		case NotStarted, Completed, Failed, Canceled, Skipped:
		default:
			out = append(out, name)
		}
	}
	return out
}

// outcome is the ended pipeline's status and reason.
func outcome(order []string, now map[string]StepState, canceling bool) (string, string) {
	by := map[StepState][]string{}
	for _, name := range order {
		by[now[name]] = append(by[now[name]], name)
	}
	var parts []string
	if canceling {
		parts = append(parts, "pipeline canceled")
	}
	named := false // the first list of steps says "step"; the ones after it read on from it
	for _, s := range []StepState{Failed, Canceled, Skipped} {
		names := by[s]
		if len(names) == 0 {
			continue
		}
		list := strings.Join(names, ", ")
		if !named {
			noun := "step "
			if len(names) > 1 {
				noun = "steps "
			}
			list, named = noun+list, true
		}
		parts = append(parts, list+" "+string(s))
	}
	switch {
	case len(by[Completed]) == len(order):
		return StatusCompleted, ""
	case canceling:
		return StatusCanceled, strings.Join(parts, "; ")
	case len(by[Failed]) > 0:
		return StatusFailed, strings.Join(parts, "; ")
	default:
		return StatusCanceled, strings.Join(parts, "; ")
	}
}
