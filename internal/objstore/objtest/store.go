package objtest

import (
	"crypto/rand"
	"encoding/hex"
	"io"
	"testing"

	"github.com/hangar-ml/hangar/internal/datastore"
)

// Store is one running object store and its own SDK's client.
type Store interface {
	// Type is the datastore type that reaches it (datastore.TypeS3, TypeAzureBlob, TypeGCS).
	Type() string
	// Endpoint is the service URL a Location names (Azurite's holds the account).
	Endpoint() string
	// NewContainer makes a new empty bucket or container, named for this test alone.
	NewContainer(t testing.TB) string
	// Put writes an object, streaming r (size bytes).
	Put(t testing.TB, container, key string, r io.Reader, size int64)
	// Get reads an object whole.
	Get(t testing.TB, container, key string) []byte
	// Keys lists the keys under prefix, sorted.
	Keys(t testing.TB, container, prefix string) []string
	// Location is where path lies in container, as a datastore named "objtest-<type>" holds it.
	Location(container, path string) datastore.Location
	// Credentials are good ones; BadCredentials are refused by the store.
	Credentials() datastore.Credentials
	BadCredentials(t testing.TB) datastore.Credentials
}

// All are the three stores on 127.0.0.1, started once for the test binary.
func All(t testing.TB) []Store {
	t.Helper()
	return []Store{S3(t), Azure(t), GCS(t)}
}

// Name is a store's short name for subtests.
func Name(s Store) string { return s.Type() }

// containerName is a fresh lowercase name valid in all three stores (3-63 characters of [a-z0-9-]).
func containerName() string {
	b := make([]byte, 6)
	rand.Read(b)
	return "t-" + hex.EncodeToString(b)
}

// PutBytes writes data as an object.
func PutBytes(t testing.TB, s Store, container, key string, data []byte) {
	t.Helper()
	s.Put(t, container, key, bytesReader(data), int64(len(data)))
}
