package cli

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/term"
)

// Destructive verbs ask before they act: on a terminal they ask and wait for an answer; without
// one (a script, CI, which has no stdin) they never read stdin, and refuse unless --yes says
// the answer beforehand.

// isTerminal reports whether r is a terminal.
func isTerminal(r any) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// stdinTerminal reports whether the user can be asked on stdin.
func (e *Env) stdinTerminal() bool {
	if e.terminal != nil {
		return e.terminal(e.stdin())
	}
	return isTerminal(e.stdin())
}

func (e *Env) stdin() io.Reader {
	if e.Stdin == nil {
		return os.Stdin
	}
	return e.Stdin
}

// confirmDecision is what confirm does: go on, refuse without asking, or ask.
type confirmDecision int

const (
	proceed confirmDecision = iota
	refuse
	ask
)

func decideConfirm(yes, terminal bool) confirmDecision {
	switch {
	case yes:
		return proceed
	case !terminal:
		return refuse
	}
	return ask
}

// confirm asks question (which ends with "?") unless yes; action names what would be done, for
// the refusal ("delete job x").
func (e *Env) confirm(yes bool, question, action string) error {
	switch decideConfirm(yes, e.stdinTerminal()) {
	case proceed:
		return nil
	case refuse:
		return usageError("%s needs confirmation: stdin is not a terminal, so pass --yes (-y) to %s without being asked", action, action)
	}
	fmt.Fprintf(e.Stderr, "%s [y/N] ", question)
	if !confirmed(e.stdin()) {
		return fmt.Errorf("did not %s (answer y, or pass --yes)", action)
	}
	return nil
}
