package asset

import (
	"strings"
	"testing"
)

// One rule for an alias's name, which Hangar's references and MLflow's routes word each their
// own way: latest and v<digits> are refused only for an alias being set.
func TestCheckAliasFault(t *testing.T) {
	tests := []struct {
		alias    string
		reserved bool
		want     AliasFault
	}{
		{"champion", true, AliasOK},
		{"a_b-C9", true, AliasOK},
		{"", false, AliasEmpty},
		{"two words", false, AliasChars},
		{"é", false, AliasChars},
		{strings.Repeat("a", 256), false, AliasChars},
		{strings.Repeat("a", 255), true, AliasOK},
		{"Latest", true, AliasLatest},
		{"Latest", false, AliasOK},
		{"v12", true, AliasVersion},
		{"V3", false, AliasOK},
		{"v1x", true, AliasOK},
	}
	for _, tt := range tests {
		if got := CheckAliasFault(tt.alias, tt.reserved); got != tt.want {
			t.Errorf("CheckAliasFault(%.20q, %v) = %d, want %d", tt.alias, tt.reserved, got, tt.want)
		}
	}
}
