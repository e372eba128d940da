package pipeline

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/hangar-ml/hangar/internal/job"
)

// Draw's limits: a line never runs past DrawWidth columns; a long name or state is cut with "…".
const (
	DrawWidth    = 80
	maxNameWidth = 30
	maxStateCol  = 24 // at least; more when the names are short
	minProducers = 16
)

// Draw lays the pipeline out top to bottom for a terminal, one line per step in Order: the
// layer number on the first step of each layer (a step's layer is one more than its deepest
// producer's, so every step is drawn below the steps it reads from), a mark for its state, its
// name, its state and the steps it reads from:
//
//	1  ✓ prep   completed
//	2  ● train  running    ← prep
//	3  · score  waiting    ← prep, train
//
// states holds each step's state text by name ("completed", "running"; absent or "" is
// "waiting"); its first word picks the mark and the rest is shown as given, so the caller may
// add a short note ("completed (reused)"). Lines fit in DrawWidth columns.
func Draw(p job.PipelineRun, states map[string]string) []string {
	deps := Deps(p)
	layers := Layers(p)
	names := Order(p)
	numCol := len(fmt.Sprint(len(layers)))
	nameCol, stateCol := 0, 0
	for _, name := range names {
		nameCol = max(nameCol, min(utf8.RuneCountInString(name), maxNameWidth))
	}
	// States get what the names leave, keeping minProducers columns for the first producer.
	stateMax := max(maxStateCol, DrawWidth-(numCol+4+nameCol+2)-utf8.RuneCountInString("  ← ")-minProducers)
	for _, name := range names {
		stateCol = max(stateCol, min(utf8.RuneCountInString(stateText(states[name])), stateMax))
	}
	var lines []string
	for i, layer := range layers {
		for j, name := range layer {
			num := ""
			if j == 0 {
				num = fmt.Sprint(i + 1)
			}
			state := stateText(states[name])
			line := fmt.Sprintf("%*s  %s %s  %s", numCol, num, mark(state),
				pad(cut(printable(name), nameCol), nameCol), pad(cut(state, stateCol), stateCol))
			lines = append(lines, withProducers(line, deps[name], numCol+4)...)
		}
	}
	return lines
}

// withProducers ends line with "← a, b". A list too long for the line wraps, aligned under its
// first producer or, when that takes fewer lines, starting on a line of its own under the
// names (indent columns in); no producer is left out.
func withProducers(line string, producers []string, indent int) []string {
	if len(producers) == 0 {
		return []string{strings.TrimRight(line, " ")}
	}
	const arrow = "  ← "
	if all := strings.Join(producers, ", "); utf8.RuneCountInString(line+arrow+all) <= DrawWidth {
		return []string{line + arrow + all}
	}
	below := append([]string{strings.TrimRight(line, " ")}, wrap(strings.Repeat(" ", indent)+"← ", producers)...)
	if utf8.RuneCountInString(line+arrow)+minProducers > DrawWidth {
		return below
	}
	if beside := wrap(line+arrow, producers); len(beside) <= len(below) {
		return beside
	}
	return below
}

// wrap writes names after first, comma-separated, going on in lines aligned under the first.
func wrap(first string, names []string) []string {
	var out []string
	cont := strings.Repeat(" ", utf8.RuneCountInString(first))
	cur := first
	for i, name := range names {
		word := cut(printable(name), DrawWidth-len(cont)-1)
		if i < len(names)-1 {
			word += ","
		}
		switch {
		case i == 0:
			cur += word
		case utf8.RuneCountInString(cur)+1+utf8.RuneCountInString(word) > DrawWidth:
			out = append(out, cur)
			cur = cont + word
		default:
			cur += " " + word
		}
	}
	return append(out, cur)
}

func stateText(s string) string {
	if strings.TrimSpace(s) == "" {
		return "waiting"
	}
	return printable(strings.TrimSpace(s))
}

// printable replaces control characters, so a state's text cannot move the cursor or recolor
// the terminal it is drawn on.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == utf8.RuneError {
			return '?'
		}
		return r
	}, s)
}

// mark is a state's one-column sign. Run statuses (Preparing, CancelRequested) are accepted
// too, so a caller may pass a step's run status as it is.
func mark(state string) string {
	word := strings.ToLower(state)
	if i := strings.IndexFunc(word, func(r rune) bool { return !unicode.IsLetter(r) }); i >= 0 {
		word = word[:i]
	}
	switch word {
	case "completed":
		return "✓"
	case "running", "preparing", "starting", "provisioning", "finalizing":
		return "●"
	case "queued", "notstarted":
		return "○"
	case "waiting":
		return "·"
	case "failed":
		return "✗"
	case "canceled", "cancelrequested", "canceling":
		return "⊘"
	case "skipped":
		return "–"
	}
	return "?"
}

// cut shortens s to n columns, ending it with "…" when it was longer.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

func pad(s string, n int) string {
	return s + strings.Repeat(" ", max(0, n-utf8.RuneCountInString(s)))
}
