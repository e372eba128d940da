package tracking

import (
	"fmt"
	"strings"
)

type tokenKind int

const (
	tkEnd    tokenKind = iota
	tkIdent            // entity.key, the key perhaps quoted
	tkWord             // AND, LIKE, ILIKE, IN, NOT, or an unqualified name
	tkOp               // = != < <= > >=
	tkString           // a quoted value, unquoted
	tkNumber
	tkList // ('a', 'b'): list holds the values
)

type token struct {
	kind tokenKind
	text string
	list []string
}

func (t token) describe() string {
	if t.kind == tkEnd {
		return "the end of the filter"
	}
	return fmt.Sprintf("'%s'", t.text)
}

// maxFilterBytes bounds what a filter string may be.
const maxFilterBytes = 16 << 10

func lex(s string) ([]token, error) {
	if len(s) > maxFilterBytes {
		return nil, invalidf("Invalid filter string: longer than %d bytes", maxFilterBytes)
	}
	var out []token
	for i := 0; i < len(s); {
		c := s[i]
		var t token
		var n int
		var err error
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
			continue
		case c == '\'' || c == '"':
			t.kind = tkString
			t.text, n, err = quoted(s[i:])
		case c == '(':
			t.kind = tkList
			t.list, n, err = list(s[i:])
			t.text = s[i : i+n]
		case strings.ContainsRune("=!<>", rune(c)):
			t.kind = tkOp
			t.text, n, err = op(s[i:])
		case c == '-' || c == '+' || c == '.' || isDigit(c):
			t.kind = tkNumber
			n = number(s[i:])
			t.text = s[i : i+n]
		case isNameByte(c) || c == '`':
			t.kind, t.text, n, err = name(s[i:])
		default:
			err = invalidf("Invalid filter string '%s': unexpected character %q at %d", s, c, i)
		}
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return nil, invalidf("Invalid filter string '%s' at %d", s, i)
		}
		out = append(out, t)
		i += n
	}
	return out, nil
}

// quoted reads a string quoted by s[0]; a doubled quote inside is one quote, as in SQL.
func quoted(s string) (string, int, error) {
	q := s[0]
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		if s[i] != q {
			b.WriteByte(s[i])
			continue
		}
		if i+1 < len(s) && s[i+1] == q {
			b.WriteByte(q)
			i++
			continue
		}
		return b.String(), i + 1, nil
	}
	return "", 0, invalidf("Invalid filter string '%s': unterminated quoted string", s)
}

func list(s string) ([]string, int, error) {
	var out []string
	i := 1
	for {
		for i < len(s) && s[i] == ' ' {
			i++
		}
		if i >= len(s) || (s[i] != '\'' && s[i] != '"') {
			return nil, 0, invalidf("While parsing a list in the query, expected string value or punctuation, but got different type in list: %s", s)
		}
		v, n, err := quoted(s[i:])
		if err != nil {
			return nil, 0, err
		}
		out = append(out, v)
		i += n
		for i < len(s) && s[i] == ' ' {
			i++
		}
		if i < len(s) && s[i] == ')' {
			return out, i + 1, nil
		}
		if i >= len(s) || s[i] != ',' {
			return nil, 0, invalidf("While parsing a list in the query, expected a ',' or ')' in %s", s)
		}
		i++
		if len(out) >= MaxSearchIDs {
			return nil, 0, invalidf("A list in the filter may hold at most %d values", MaxSearchIDs)
		}
	}
}

func op(s string) (string, int, error) {
	for _, o := range []string{"!=", "<>", "<=", ">=", "=", "<", ">"} {
		if strings.HasPrefix(s, o) {
			if o == "<>" {
				return "!=", 2, nil
			}
			return o, len(o), nil
		}
	}
	return "", 0, invalidf("Invalid comparator '%c'", s[0])
}

func number(s string) int {
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	for i < len(s) && (isDigit(s[i]) || s[i] == '.') {
		i++
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '-' || s[j] == '+') {
			j++
		}
		if j < len(s) && isDigit(s[j]) {
			for i = j; i < len(s) && isDigit(s[i]); i++ {
			}
		}
	}
	return i
}

// name reads a bare word or entity.key, where the key may be quoted with backticks or double
// quotes (metrics.`my loss`, params."lr").
func name(s string) (tokenKind, string, int, error) {
	i := 0
	for i < len(s) && isNameByte(s[i]) {
		i++
	}
	dot := strings.IndexByte(s[:i], '.')
	if i < len(s) && i > 0 && s[i-1] == '.' && (s[i] == '`' || s[i] == '"') {
		q := s[i]
		end := strings.IndexByte(s[i+1:], q)
		if end < 0 {
			return 0, "", 0, invalidf("Invalid filter string '%s': unterminated quoted key", s)
		}
		i += end + 2
		return tkIdent, s[:i], i, nil
	}
	if s[0] == '`' {
		return 0, "", 0, invalidf("Invalid identifier %s: a quoted key follows its entity, as metrics.`my key`", s)
	}
	if dot >= 0 {
		return tkIdent, s[:i], i, nil
	}
	return tkWord, s[:i], i, nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isNameByte(c byte) bool {
	return c == '_' || c == '.' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || isDigit(c)
}
