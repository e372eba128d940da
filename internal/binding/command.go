package binding

import (
	"errors"
	"fmt"
	"github.com/hangar-ml/hangar/internal/pattern"
	"strings"
)

// A command is text with ${{ expr }} references and $[[ ... ]] optional segments.
type tokenKind int

const (
	tokText  tokenKind = iota
	tokRef             // ${{ expr }}; text is the trimmed expression
	tokOpen            // $[[
	tokClose           // ]] closing a $[[
)

type token struct {
	kind tokenKind
	text string
}

// ErrNoValue is wrapped by Bind's error for a reference without a value: a check made before
// the run, with only the values known then, ignores it.
var ErrNoValue = errors.New("no value for")

var exprPattern = pattern.New(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_-]*)*$`)

// tokenize splits a command into text, references and optional-segment markers. A "]]"
// outside $[[ ]] is plain text (bash uses it in [[ ... ]] tests). On error it also returns
// the tokens read so far.
func tokenize(cmd string) ([]token, error) {
	var toks []token
	inSeg := false
	start := 0
	flush := func(end int) {
		if end > start {
			toks = append(toks, token{tokText, cmd[start:end]})
		}
	}
	for i := 0; i < len(cmd); {
		switch {
		case strings.HasPrefix(cmd[i:], "${{"):
			end := strings.Index(cmd[i+3:], "}}")
			if end < 0 {
				return toks, errors.New("unterminated ${{ (missing }})")
			}
			expr := strings.TrimSpace(cmd[i+3 : i+3+end])
			if !exprPattern.MatchString(expr) {
				return toks, fmt.Errorf("malformed expression ${{%s}}", Truncate(cmd[i+3:i+3+end]))
			}
			flush(i)
			toks = append(toks, token{tokRef, expr})
			i += 3 + end + 2
		case strings.HasPrefix(cmd[i:], "$[["):
			if inSeg {
				return toks, errors.New("nested $[[ is not allowed")
			}
			flush(i)
			toks = append(toks, token{kind: tokOpen})
			inSeg = true
			i += 3
		case inSeg && strings.HasPrefix(cmd[i:], "]]"):
			flush(i)
			toks = append(toks, token{kind: tokClose})
			inSeg = false
			i += 2
		default:
			i++
			continue
		}
		start = i
	}
	flush(len(cmd))
	if inSeg {
		return toks, errors.New("unterminated $[[ (missing ]])")
	}
	return toks, nil
}

// References lists the ${{...}} expressions used in a command, in order of first use and
// without repeats, e.g. ["inputs.lr", "outputs.model"]. A malformed command yields the
// references before the problem.
func References(command string) []string {
	toks, _ := tokenize(command)
	var out []string
	seen := map[string]bool{}
	for _, t := range toks {
		if t.kind == tokRef && !seen[t.text] {
			seen[t.text] = true
			out = append(out, t.text)
		}
	}
	return out
}

// Use is one reference with whether it sits inside a $[[ ]] segment.
type Use struct {
	Expr     string
	Optional bool
}

// Uses lists every reference in a command with its segment context. On error it also
// returns the references read so far.
func Uses(command string) ([]Use, error) {
	toks, err := tokenize(command)
	var out []Use
	inSeg := false
	for _, t := range toks {
		switch t.kind {
		case tokOpen:
			inSeg = true
		case tokClose:
			inSeg = false
		case tokRef:
			out = append(out, Use{t.text, inSeg})
		}
	}
	return out, err
}

// Rename rewrites each ${{expr}} of a command as ${{rename(expr)}}, leaving every other
// byte as written.
func Rename(command string, rename func(expr string) string) (string, error) {
	toks, err := tokenize(command)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, t := range toks {
		switch t.kind {
		case tokText:
			b.WriteString(t.text)
		case tokOpen:
			b.WriteString("$[[")
		case tokClose:
			b.WriteString("]]")
		case tokRef:
			b.WriteString("${{" + rename(t.text) + "}}")
		}
	}
	return b.String(), nil
}

// Bind substitutes ${{inputs.x}}, ${{outputs.y}} (and any other key present in values)
// in a command and resolves $[[ ... ]] optional segments: a segment is kept (substituted)
// when every reference inside it has a value, and dropped otherwise. A reference outside
// any segment without a value is an error. Values are written for `bash -c` according to
// how bash reads the place where they land (see shell.go): quoted so that they reach the
// program intact, checked as integers or names where bash evaluates even quoted text, and
// refused where bash would run them as code.
func Bind(command string, values map[string]string) (string, error) {
	if strings.ContainsRune(command, 0) {
		return "", errors.New("command contains a NUL byte")
	}
	toks, err := tokenize(command)
	if err != nil {
		return "", err
	}
	base := placeholderBase(command)
	var text strings.Builder
	var slots []slot
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch t.kind {
		case tokText:
			text.WriteString(t.text)
		case tokRef:
			v, ok := values[t.text]
			if !ok {
				return "", fmt.Errorf("%w ${{%s}}", ErrNoValue, t.text)
			}
			start := text.Len()
			text.WriteString(placeholder(base, len(slots)))
			slots = append(slots, slot{name: t.text, value: v, start: start, end: text.Len()})
		case tokOpen:
			end := i + 1
			for end < len(toks) && toks[end].kind != tokClose {
				end++
			}
			if !segmentBound(toks[i+1:end], values) {
				i = end
			}
		}
	}
	return bindShell(text.String(), base, slots)
}

// segmentBound reports whether every reference in a $[[ ]] segment has a value.
func segmentBound(seg []token, values map[string]string) bool {
	for _, t := range seg {
		if _, ok := values[t.text]; t.kind == tokRef && !ok {
			return false
		}
	}
	return true
}
