package asset

import (
	"fmt"
	"strings"
)

// CheckType returns t's canonical spelling among types (case and '-' for '_' do not matter; ""
// is types[0], the default), or an error naming the types.
func CheckType(t string, types []string) (string, error) {
	if t == "" {
		return types[0], nil
	}
	for _, known := range types {
		if strings.EqualFold(strings.ReplaceAll(t, "-", "_"), known) {
			return known, nil
		}
	}
	return "", fmt.Errorf("type %q: expected one of %s", t, strings.Join(types, ", "))
}
