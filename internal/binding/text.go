package binding

import "strconv"

// quote writes a value for a message: quoted, and cut after 60 characters.
func quote(s string) string {
	return strconv.Quote(truncate(s))
}

func truncate(s string) string {
	const max = 60
	if r := []rune(s); len(r) > max {
		return string(r[:max]) + "..."
	}
	return s
}
