package objtest

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"testing"

	"cloud.google.com/go/storage"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"

	"github.com/hangar-ml/hangar/internal/datastore"
)

// GCSServer is a running fake-gcs-server (in memory, plain HTTP).
type GCSServer struct {
	URL    string // http://host:port
	Client *storage.Client
}

// GCS is the fake-gcs-server of this test binary on 127.0.0.1.
func GCS(t testing.TB) *GCSServer { return GCSAt(t, "127.0.0.1") }

// GCSAt is the fake-gcs-server of this test binary listening on host, started on first use.
func GCSAt(t testing.TB, host string) *GCSServer {
	t.Helper()
	bin := tool(t, "HANGAR_FAKE_GCS", "fake-gcs-server")
	return shared(t, "fake-gcs", host, func() (*GCSServer, error) {
		addr, _, err := launch("fake-gcs", host, func(port int, data string) []string {
			url := fmt.Sprintf("http://%s:%d", host, port)
			return []string{bin, "-scheme", "http", "-host", host, "-port", fmt.Sprint(port), "-backend", "memory",
				"-external-url", url, "-public-host", fmt.Sprintf("%s:%d", host, port), "-log-level", "warn"}
		}, nil)
		if err != nil {
			return nil, err
		}
		s := &GCSServer{URL: "http://" + addr}
		s.Client, err = storage.NewClient(ctx(nopTB{}), option.WithEndpoint(s.URL+"/storage/v1/"), option.WithoutAuthentication())
		return s, err
	})
}

func (s *GCSServer) Type() string     { return datastore.TypeGCS }
func (s *GCSServer) Endpoint() string { return s.URL }

func (s *GCSServer) NewContainer(t testing.TB) string {
	t.Helper()
	name := containerName()
	if err := s.Client.Bucket(name).Create(ctx(t), "test-project", nil); err != nil {
		t.Fatalf("fake-gcs: create bucket %s: %v", name, err)
	}
	return name
}

func (s *GCSServer) Put(t testing.TB, bucket, key string, r io.Reader, size int64) {
	t.Helper()
	w := s.Client.Bucket(bucket).Object(key).NewWriter(ctx(t))
	if _, err := io.Copy(w, r); err != nil {
		t.Fatalf("fake-gcs: put %s/%s: %v", bucket, key, err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("fake-gcs: put %s/%s: %v", bucket, key, err)
	}
}

func (s *GCSServer) Get(t testing.TB, bucket, key string) []byte {
	t.Helper()
	r, err := s.Client.Bucket(bucket).Object(key).NewReader(ctx(t))
	if err != nil {
		t.Fatalf("fake-gcs: get %s/%s: %v", bucket, key, err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("fake-gcs: read %s/%s: %v", bucket, key, err)
	}
	return b
}

func (s *GCSServer) Keys(t testing.TB, bucket, prefix string) []string {
	t.Helper()
	var keys []string
	it := s.Client.Bucket(bucket).Objects(ctx(t), &storage.Query{Prefix: prefix})
	for {
		a, err := it.Next()
		if errors.Is(err, iterator.Done) {
			break
		}
		if err != nil {
			t.Fatalf("fake-gcs: list %s/%s: %v", bucket, prefix, err)
		}
		keys = append(keys, a.Name)
	}
	sort.Strings(keys)
	return keys
}

func (s *GCSServer) Location(bucket, path string) datastore.Location {
	return datastore.Location{Datastore: "objtest-gcs", Type: datastore.TypeGCS, Container: bucket, Endpoint: s.URL, Path: path}
}

// Credentials are none: the emulator takes unauthenticated requests.
func (s *GCSServer) Credentials() datastore.Credentials { return datastore.Credentials{} }

// BadCredentials are a service account key whose token endpoint refuses it (a local server
// standing in for Google's), with a private key that must appear in no message.
func (s *GCSServer) BadCredentials(t testing.TB) datastore.Credentials {
	t.Helper()
	return datastore.Credentials{ServiceAccountJSON: ServiceAccountJSON(t, false)}
}

// nopTB lets ctx serve a context to a start that no test owns.
type nopTB struct{ testing.TB }

func (nopTB) Cleanup(func()) {}
