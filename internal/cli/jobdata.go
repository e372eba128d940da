package cli

import (
	"fmt"

	"github.com/hangar-ml/hangar/internal/api"
)

// fmtRunData lists a run's inputs and outputs in object stores for job show: where each lies,
// with which datastore's credentials, and what the node fetched (and found in its cache) or wrote.
func fmtRunData(data []api.RunData) []string {
	var out []string
	for _, d := range data {
		line := fmt.Sprintf("%s %s: %s", d.Kind, d.Name, d.URI)
		via := "the node's own identity"
		if d.Datastore != "" {
			via = "datastore " + d.Datastore
		}
		line += " (" + via
		if d.Mode != "" {
			line += ", " + d.Mode
		}
		line += ")"
		if m := d.Moved; m != nil {
			line += ": " + fmtMoved(d.Kind, *m)
		}
		out = append(out, line)
	}
	return out
}

// fmtMoved says what the node moved: "12 objects, 3.4 MB read: 12 (3.4 MB) from the node's
// cache, none fetched", "12 objects, 3.4 MB read: all fetched from the store", or "3 objects,
// 1.2 MB written".
func fmtMoved(kind string, m api.DataMoved) string {
	if kind == "output" {
		return fmt.Sprintf("%s, %s written", objectsText(m.Objects), humanBytes(m.Bytes))
	}
	read := fmt.Sprintf("%s, %s read: ", objectsText(m.Objects), humanBytes(m.Bytes))
	fetched := m.Objects - m.CachedObjects
	switch {
	case m.CachedObjects == 0:
		return read + "all fetched from the store"
	case fetched == 0:
		return read + fmt.Sprintf("%d (%s) from the node's cache, none fetched", m.CachedObjects, humanBytes(m.CachedBytes))
	}
	return read + fmt.Sprintf("%d (%s) from the node's cache, %d (%s) fetched from the store", m.CachedObjects,
		humanBytes(m.CachedBytes), fetched, humanBytes(m.Bytes-m.CachedBytes))
}

func objectsText(n int64) string {
	if n == 1 {
		return "1 object"
	}
	return fmt.Sprintf("%d objects", n)
}

// storeOutput is where a run wrote output name in an object store ("" when not in one).
func storeOutput(d *api.RunDetail, name string) string {
	for _, x := range d.Data {
		if x.Kind == "output" && x.Name == name {
			return x.URI
		}
	}
	return ""
}
