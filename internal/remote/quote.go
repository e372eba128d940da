package remote

import "strings"

// Quote returns s quoted for a POSIX shell (sh, dash, bash, zsh, ksh): unchanged when it holds only
// characters no shell treats specially, else in single quotes with each ' written as '"'"'.
// A shell argument cannot hold a NUL byte; Quote does not check for one.
func Quote(s string) string {
	if s == "" {
		return "''"
	}
	if safe(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
}

// Join quotes each argument with Quote and joins them with spaces: a command line that runs argv as given.
func Join(argv ...string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = Quote(a)
	}
	return strings.Join(q, " ")
}

// safe reports whether s needs no quoting. '=' and '~' are left out on purpose: a leading '='
// expands in zsh and a leading '~' everywhere.
func safe(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("_-+.,/:@%", c) >= 0:
		default:
			return false
		}
	}
	return true
}
