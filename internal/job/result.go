package job

import (
	"encoding/json"
	"time"
)

// ResultFile is the file a run's supervisor (or its stand-in, `hangar reap`) writes into the
// run's directory on its node when the run ended there, before it reports the end. Backends read
// it to learn how a run ended when the supervisor could not report (design record 0010).
const ResultFile = "result.json"

// Result is how a run ended where it ran: the content of ResultFile, what backends report as a
// run's final status, and what agents send in their heartbeats. It is the one run-result type;
// every layer that speaks of a run's end uses it.
type Result struct {
	State    State     `json:"state"`
	ExitCode *int      `json:"exit_code,omitempty"`
	Reason   string    `json:"reason,omitempty"`
	Time     time.Time `json:"time"`
}

// ParseResult reads a result file's content. A file cut short, or one that does not name a
// terminal state, is no result (ok false): the run has not ended as far as that file tells.
func ParseResult(data []byte) (r *Result, ok bool) {
	var res Result
	if err := json.Unmarshal(data, &res); err != nil || !res.State.Terminal() {
		return nil, false
	}
	return &res, true
}
