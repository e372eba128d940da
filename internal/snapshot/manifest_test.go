package snapshot

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

func sample() *Manifest {
	return &Manifest{Entries: []Entry{
		{Path: "a.txt", Type: TypeFile, Hash: sha("a"), Size: 1, Mode: 0o644},
		{Path: "bin", Type: TypeDir, Mode: 0o755},
		{Path: "bin/run", Type: TypeFile, Hash: sha("#!/bin/sh"), Size: 9, Mode: 0o755},
		{Path: "empty", Type: TypeFile, Hash: sha(""), Mode: 0o600},
		{Path: "link", Type: TypeSymlink, Mode: 0o777, Target: "bin/run"},
	}}
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	m := sample()
	data, h := mustEncode(t, m)
	want := `{"entries":[{"path":"a.txt","type":"file","hash":"` + sha("a") + `","size":1,"mode":420},`
	if !strings.HasPrefix(string(data), want) {
		t.Errorf("Encode = %s\nwant prefix %s", data, want)
	}
	if h != sha(string(data)) {
		t.Errorf("hash %s is not the SHA-256 of the data", h)
	}
	got, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(m, got); diff != "" {
		t.Fatalf("round trip (-want +got):\n%s", diff)
	}
	// Order of the entries does not change the encoding.
	shuffled := &Manifest{Entries: slices.Clone(m.Entries)}
	rand.Shuffle(len(shuffled.Entries), func(i, j int) {
		shuffled.Entries[i], shuffled.Entries[j] = shuffled.Entries[j], shuffled.Entries[i]
	})
	if _, h2 := mustEncode(t, shuffled); h2 != h {
		t.Fatal("shuffled manifest encodes differently")
	}
	if _, h3 := mustEncode(t, &Manifest{}); h3 != sha(`{"entries":[]}`) {
		t.Fatal("empty manifest does not encode as {\"entries\":[]}")
	}
}

func TestDecodeRejects(t *testing.T) {
	h := sha("x")
	tests := []struct {
		name string
		json string
	}{
		{"parent dir", `{"entries":[{"path":"../x","type":"dir","mode":493}]}`},
		{"inner parent", `{"entries":[{"path":"a/../../x","type":"dir","mode":493}]}`},
		{"dot dot", `{"entries":[{"path":"..","type":"dir","mode":493}]}`},
		{"absolute", `{"entries":[{"path":"/etc/x","type":"dir","mode":493}]}`},
		{"dot", `{"entries":[{"path":".","type":"dir","mode":493}]}`},
		{"empty path", `{"entries":[{"path":"","type":"dir","mode":493}]}`},
		{"double slash", `{"entries":[{"path":"a//b","type":"dir","mode":493}]}`},
		{"trailing slash", `{"entries":[{"path":"a/","type":"dir","mode":493}]}`},
		{"NUL", `{"entries":[{"path":"a\u0000b","type":"dir","mode":493}]}`},
		{"duplicate", `{"entries":[{"path":"a","type":"dir","mode":493},{"path":"a","type":"dir","mode":493}]}`},
		{"file and dir", `{"entries":[{"path":"a","type":"dir","mode":493},{"path":"a","type":"file","hash":"` + h + `","mode":420}]}`},
		{"below a file", `{"entries":[{"path":"a","type":"file","hash":"` + h + `","mode":420},{"path":"a/b","type":"dir","mode":493}]}`},
		{"below a symlink", `{"entries":[{"path":"l","type":"symlink","target":"/tmp","mode":511},{"path":"l/f","type":"file","hash":"` + h + `","mode":420}]}`},
		{"bad hash", `{"entries":[{"path":"a","type":"file","hash":"abc","mode":420}]}`},
		{"upper hash", `{"entries":[{"path":"a","type":"file","hash":"` + strings.ToUpper(h) + `","mode":420}]}`},
		{"negative size", `{"entries":[{"path":"a","type":"file","hash":"` + h + `","size":-1,"mode":420}]}`},
		{"setuid", `{"entries":[{"path":"a","type":"file","hash":"` + h + `","mode":2541}]}`},
		{"dir with hash", `{"entries":[{"path":"a","type":"dir","hash":"` + h + `","mode":493}]}`},
		{"symlink without target", `{"entries":[{"path":"a","type":"symlink","mode":511}]}`},
		{"unknown type", `{"entries":[{"path":"a","type":"fifo","mode":420}]}`},
		{"unknown field", `{"entries":[],"extra":1}`},
		{"trailing data", `{"entries":[]} {}`},
		{"not json", `entries`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if m, err := Decode([]byte(tt.json)); err == nil {
				t.Fatalf("Decode accepted %s: %+v", tt.json, m)
			}
		})
	}
	// Escaping symlink targets are accepted here and refused by Materialize.
	if _, err := Decode([]byte(`{"entries":[{"path":"l","type":"symlink","target":"../../etc","mode":511}]}`)); err != nil {
		t.Fatalf("Decode refused an escaping symlink: %v", err)
	}
	if _, err := Decode([]byte(`{"entries":[{"path":"a/../x","type":"dir","mode":493}]}`)); !errors.Is(err, ErrInvalid) {
		t.Fatalf("Decode error %v does not wrap ErrInvalid", err)
	}
}

func TestFilesTotalSizeHashes(t *testing.T) {
	m := sample()
	m.Entries = append(m.Entries, Entry{Path: "same", Type: TypeFile, Hash: sha("a"), Size: 1, Mode: 0o644})
	if got := len(m.Files()); got != 4 {
		t.Errorf("Files = %d entries, want 4", got)
	}
	if got := m.TotalSize(); got != 11 {
		t.Errorf("TotalSize = %d, want 11", got)
	}
	if diff := cmp.Diff([]string{sha("a"), sha("#!/bin/sh"), sha("")}, m.Hashes()); diff != "" {
		t.Errorf("Hashes (-want +got):\n%s", diff)
	}
}

func TestDiff(t *testing.T) {
	a := sample()
	b := &Manifest{Entries: slices.Clone(a.Entries)}
	b.Entries[0].Hash = sha("A")                                                  // a.txt content
	b.Entries[2].Mode = 0o700                                                     // bin/run mode
	b.Entries = slices.Delete(b.Entries, 3, 4)                                    // empty removed
	b.Entries = append(b.Entries, Entry{Path: "new", Type: TypeDir, Mode: 0o755}) // added
	b.Entries[3] = Entry{Path: "link", Type: TypeSymlink, Mode: 0o777, Target: "a.txt"}
	tests := []struct {
		name                    string
		a, b                    *Manifest
		added, changed, removed []string
	}{
		{"same", a, a, nil, nil, nil},
		{"changes", a, b, []string{"new"}, []string{"a.txt", "bin/run", "link"}, []string{"empty"}},
		{"from nothing", nil, a, []string{"a.txt", "bin", "bin/run", "empty", "link"}, nil, nil},
		{"to nothing", a, nil, nil, nil, []string{"a.txt", "bin", "bin/run", "empty", "link"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			added, changed, removed := Diff(tt.a, tt.b)
			got := [][]string{added, changed, removed}
			if diff := cmp.Diff([][]string{tt.added, tt.changed, tt.removed}, got); diff != "" {
				t.Errorf("Diff (-want +got):\n%s", diff)
			}
		})
	}
}

// genManifest draws a valid manifest: paths from a small alphabet so
// nesting and shared prefixes are common.
func genManifest(t *rapid.T) *Manifest {
	names := rapid.SampledFrom([]string{"a", "b", "a.b", "a-b", "é", "z z"})
	kinds := map[string]EntryType{}
	for _, parts := range rapid.SliceOfN(rapid.SliceOfN(names, 1, 3), 0, 12).Draw(t, "paths") {
		for i := range parts {
			p := strings.Join(parts[:i+1], "/")
			switch {
			case i < len(parts)-1:
				kinds[p] = TypeDir
			case kinds[p] == "":
				kinds[p] = rapid.SampledFrom([]EntryType{TypeFile, TypeDir, TypeSymlink}).Draw(t, "type")
			}
		}
	}
	m := &Manifest{Entries: []Entry{}}
	for p, k := range kinds {
		e := Entry{Path: p, Type: k, Mode: rapid.Uint32Range(0, 0o777).Draw(t, "mode")}
		switch k {
		case TypeFile:
			e.Hash, e.Size = sha(p), rapid.Int64Range(0, 1<<40).Draw(t, "size")
		case TypeSymlink:
			e.Target = rapid.SampledFrom([]string{"a", "../x", "/abs", "a/b"}).Draw(t, "target")
		}
		m.Entries = append(m.Entries, e)
	}
	return m
}

func TestEncodeDecodeProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := genManifest(t)
		data, h, err := m.Encode()
		if err != nil {
			t.Fatal(err)
		}
		got, err := Decode(data)
		if err != nil {
			t.Fatal(err)
		}
		data2, h2, err := got.Encode()
		if err != nil || h2 != h || string(data2) != string(data) {
			t.Fatalf("re-encoding differs: %v", err)
		}
		added, changed, removed := Diff(m, got)
		if len(added)+len(changed)+len(removed) != 0 {
			t.Fatalf("Diff after round trip: %v %v %v", added, changed, removed)
		}
	})
}
