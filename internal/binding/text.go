package binding

import "strconv"

// Quote quotes a user value for a message, shortening long ones (Truncate).
func Quote(s string) string {
	return strconv.Quote(Truncate(s))
}

// Truncate shortens a user value for a message: its first 60 characters and "...".
func Truncate(s string) string {
	const max = 60
	if r := []rune(s); len(r) > max {
		return string(r[:max]) + "..."
	}
	return s
}
