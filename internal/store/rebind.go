package store

import (
	"strconv"
	"strings"
)

// rebind rewrites a query's ? placeholders as PostgreSQL's $1, $2... in order. A ? inside a
// string literal ('...', a quote inside doubled), a quoted identifier ("...") or a comment (-- to
// the end of the line, /* ... */) is text, not a placeholder, and is left as it is.
func rebind(query string) string {
	if !strings.Contains(query, "?") {
		return query
	}
	var b strings.Builder
	b.Grow(len(query) + 8)
	n := 0
	for i := 0; i < len(query); i++ {
		c := query[i]
		switch {
		case c == '?':
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		case c == '\'' || c == '"':
			end := closing(query, i+1, c)
			b.WriteString(query[i:end])
			i = end - 1
			continue
		case c == '-' && strings.HasPrefix(query[i:], "--"):
			end := strings.IndexByte(query[i:], '\n')
			if end < 0 {
				end = len(query) - i
			}
			b.WriteString(query[i : i+end])
			i += end - 1
			continue
		case c == '/' && strings.HasPrefix(query[i:], "/*"):
			end := strings.Index(query[i+2:], "*/")
			if end < 0 {
				end = len(query) - i
			} else {
				end += 4
			}
			b.WriteString(query[i : i+end])
			i += end - 1
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// closing is the index just past the quote q that ends the literal starting at from (a doubled
// quote is an escaped one); the query's length when it is not closed.
func closing(query string, from int, q byte) int {
	for i := from; i < len(query); i++ {
		if query[i] != q {
			continue
		}
		if i+1 < len(query) && query[i+1] == q {
			i++
			continue
		}
		return i + 1
	}
	return len(query)
}
