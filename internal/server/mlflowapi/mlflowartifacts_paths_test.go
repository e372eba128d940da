package mlflowapi

import (
	"strings"
	"testing"
)

func FuzzParseArtifactPath(f *testing.F) {
	for _, s := range []string{"0/r/artifacts", "0/r/artifacts/a/b", "0/r/artifacts/../x", "0/r/artifacts/a\\b", "/0/r"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		a, err := parseArtifactPath(p)
		if err != nil {
			return
		}
		for _, seg := range strings.Split(p, "/") {
			if seg == "" || seg == "." || seg == ".." || strings.ContainsAny(seg, "\\\x00") {
				t.Fatalf("accepted %q (segment %q)", p, seg)
			}
		}
		if got := a.experiment + "/" + a.run + "/artifacts"; !strings.HasPrefix(p, got) || strings.Contains(a.run, "/") {
			t.Fatalf("parsed %q as %+v", p, a)
		}
	})
}
