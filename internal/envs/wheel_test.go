package envs

import (
	"archive/zip"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// buildWheel writes a minimal pure-Python wheel name-version-py3-none-any.whl into dir; importing
// the package gives VALUE.
func buildWheel(t testing.TB, dir, name, version, value string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, fmt.Sprintf("%s-%s-py3-none-any.whl", name, version))
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z := zip.NewWriter(f)
	info := fmt.Sprintf("%s-%s.dist-info", name, version)
	files := []struct{ name, body string }{
		{name + "/__init__.py", "VALUE = " + value + "\n"},
		{info + "/METADATA", fmt.Sprintf("Metadata-Version: 2.1\nName: %s\nVersion: %s\n", name, version)},
		{info + "/WHEEL", "Wheel-Version: 1.0\nGenerator: hangar-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
	}
	var record strings.Builder
	for _, fl := range files {
		w, err := z.Create(fl.name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(fl.body)); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256([]byte(fl.body))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", fl.name, base64.RawURLEncoding.EncodeToString(sum[:]), len(fl.body))
	}
	fmt.Fprintf(&record, "%s/RECORD,,\n", info)
	w, err := z.Create(info + "/RECORD")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte(record.String())); err != nil {
		t.Fatal(err)
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}
