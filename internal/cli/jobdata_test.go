package cli

import (
	"testing"

	"github.com/hangar-ml/hangar/internal/api"
)

func TestFmtMoved(t *testing.T) {
	for _, c := range []struct {
		kind string
		m    api.DataMoved
		want string
	}{
		{"input", api.DataMoved{Objects: 2, Bytes: 2048}, "2 objects, 2.0 kB read: all fetched from the store"},
		{"input", api.DataMoved{Objects: 1, Bytes: 12, CachedObjects: 1, CachedBytes: 12}, "1 object, 12 B read: 1 (12 B) from the node's cache, none fetched"},
		{"input", api.DataMoved{Objects: 3, Bytes: 3072, CachedObjects: 2, CachedBytes: 2048}, "3 objects, 3.1 kB read: 2 (2.0 kB) from the node's cache, 1 (1.0 kB) fetched from the store"},
		{"output", api.DataMoved{Objects: 1, Bytes: 12}, "1 object, 12 B written"},
	} {
		if got := fmtMoved(c.kind, c.m); got != c.want {
			t.Errorf("fmtMoved(%s, %+v) = %q, want %q", c.kind, c.m, got, c.want)
		}
	}
}
