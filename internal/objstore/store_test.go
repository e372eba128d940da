package objstore_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/hangar-ml/hangar/internal/datastore"
	"github.com/hangar-ml/hangar/internal/objstore"
	"github.com/hangar-ml/hangar/internal/objstore/objtest"
)

// The tests here run against the three real stores of the test bed (internal/objstore/objtest).

func open(t *testing.T, loc datastore.Location, cred datastore.Credentials) *objstore.Bucket {
	t.Helper()
	b, err := objstore.Open(t.Context(), loc, cred)
	if err != nil {
		t.Fatalf("Open %s: %v", loc, err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func random(t *testing.T, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	rand.Read(b)
	return b
}

// tree reads every file under dir as rel path → content.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		b, err := os.ReadFile(p)
		out[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatalf("read %s: %v", dir, err)
	}
	return out
}

func keys(m map[string]string) []string {
	var k []string
	for x := range m {
		k = append(k, x)
	}
	sort.Strings(k)
	return k
}

func TestDownloadFolderAndFile(t *testing.T) {
	for _, s := range objtest.All(t) {
		t.Run(objtest.Name(s), func(t *testing.T) {
			c := s.NewContainer(t)
			big := random(t, 3<<20+17)
			objtest.PutBytes(t, s, c, "data/a.txt", []byte("alpha\n"))
			objtest.PutBytes(t, s, c, "data/sub/b.bin", big)
			objtest.PutBytes(t, s, c, "data/sub/deeper/c.csv", []byte("x,y\n1,2\n"))
			objtest.PutBytes(t, s, c, "datalake/not-under-data.txt", []byte("no"))
			objtest.PutBytes(t, s, c, "other.txt", []byte("no"))

			dest := filepath.Join(t.TempDir(), "in", "data")
			st, err := open(t, s.Location(c, "data"), s.Credentials()).Download(t.Context(), dest, objstore.DownloadOptions{})
			if err != nil {
				t.Fatalf("Download folder: %v", err)
			}
			got := tree(t, dest)
			want := map[string]string{"a.txt": "alpha\n", "sub/b.bin": string(big), "sub/deeper/c.csv": "x,y\n1,2\n"}
			if strings.Join(keys(got), " ") != strings.Join(keys(want), " ") {
				t.Fatalf("files %v, want %v", keys(got), keys(want))
			}
			for k, v := range want {
				if got[k] != v {
					t.Errorf("%s: %d bytes differ from the object's %d", k, len(got[k]), len(v))
				}
			}
			if st.Objects != 3 || st.Fetched != 3 || st.Bytes != int64(len(big)+6+8) || st.FetchedBytes != st.Bytes {
				t.Errorf("stats %+v", st)
			}
			if leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(dest), ".hangar-part-*")); len(leftovers) > 0 {
				t.Errorf("staging left: %v", leftovers)
			}

			file := filepath.Join(t.TempDir(), "b.bin")
			if _, err := open(t, s.Location(c, "data/sub/b.bin"), s.Credentials()).Download(t.Context(), file, objstore.DownloadOptions{File: true, ReadOnly: true}); err != nil {
				t.Fatalf("Download file: %v", err)
			}
			if b, _ := os.ReadFile(file); !bytes.Equal(b, big) {
				t.Errorf("file: %d bytes differ from the object's %d", len(b), len(big))
			}
			if fi, _ := os.Stat(file); fi.Mode().Perm()&0o222 != 0 {
				t.Errorf("read-only file has mode %v", fi.Mode())
			}
		})
	}
}

func TestCachedRerunFetchesNothing(t *testing.T) {
	for _, s := range objtest.All(t) {
		t.Run(objtest.Name(s), func(t *testing.T) {
			c := s.NewContainer(t)
			objtest.PutBytes(t, s, c, "ds/one", random(t, 1<<20))
			objtest.PutBytes(t, s, c, "ds/two/three", []byte("3"))
			cache := &objstore.Cache{Dir: t.TempDir()}
			b := open(t, s.Location(c, "ds"), s.Credentials())
			first, err := b.Download(t.Context(), filepath.Join(t.TempDir(), "run1"), objstore.DownloadOptions{Cache: cache, ReadOnly: true})
			if err != nil {
				t.Fatalf("first: %v", err)
			}
			if first.Fetched != 2 || first.Cached != 0 {
				t.Errorf("first run: %+v, want 2 fetched", first)
			}
			dest := filepath.Join(t.TempDir(), "run2")
			second, err := b.Download(t.Context(), dest, objstore.DownloadOptions{Cache: cache, ReadOnly: true})
			if err != nil {
				t.Fatalf("second: %v", err)
			}
			if second.Fetched != 0 || second.FetchedBytes != 0 || second.Cached != 2 || second.CachedBytes != 1<<20+1 {
				t.Errorf("second run: %+v, want all from the cache, nothing fetched", second)
			}
			fi, err := os.Stat(filepath.Join(dest, "one"))
			if err != nil {
				t.Fatal(err)
			}
			// A copy, never a link to the cache's entry: a run able to make its link writable
			// again would change what every later run on the node reads.
			if fi.Sys().(*syscall.Stat_t).Nlink != 1 || fi.Mode().Perm()&0o222 != 0 {
				t.Errorf("a read-only file from the cache: links %d mode %v, want a read-only copy of its own", fi.Sys().(*syscall.Stat_t).Nlink, fi.Mode())
			}

			// A writable copy, and a changed object fetched anew, alone.
			objtest.PutBytes(t, s, c, "ds/two/three", []byte("three, changed"))
			dest = filepath.Join(t.TempDir(), "run3")
			third, err := b.Download(t.Context(), dest, objstore.DownloadOptions{Cache: cache})
			if err != nil {
				t.Fatalf("third: %v", err)
			}
			if third.Fetched != 1 || third.Cached != 1 {
				t.Errorf("after a change: %+v, want the changed object fetched, the other cached", third)
			}
			if got := tree(t, dest)["two/three"]; got != "three, changed" {
				t.Errorf("changed object reads %q", got)
			}
			if err := os.WriteFile(filepath.Join(dest, "one"), []byte("scribbled"), 0o644); err != nil {
				t.Errorf("a writable download cannot be written: %v", err)
			}
			again, err := b.Download(t.Context(), filepath.Join(t.TempDir(), "run4"), objstore.DownloadOptions{Cache: cache})
			if err != nil || again.Fetched != 0 {
				t.Fatalf("fourth: %+v %v", again, err)
			}
		})
	}
}

func TestResumeAfterCut(t *testing.T) {
	const size = 24 << 20
	for _, s := range objtest.All(t) {
		t.Run(objtest.Name(s), func(t *testing.T) {
			c := s.NewContainer(t)
			data := random(t, size)
			objtest.PutBytes(t, s, c, "big/model.bin", data)
			loc := s.Location(c, "big")
			host := strings.Split(strings.TrimPrefix(loc.Endpoint, "http://"), "/")[0]
			p := objtest.NewProxy(t, host)
			loc.Endpoint = p.Rewrite(loc.Endpoint)
			b := open(t, loc, s.Credentials())
			p.CutAfter(6 << 20)
			dest := filepath.Join(t.TempDir(), "big")
			st, err := b.Download(t.Context(), dest, objstore.DownloadOptions{})
			if err != nil {
				t.Fatalf("Download across a cut: %v", err)
			}
			if !p.Cut() {
				t.Fatal("the proxy never cut the connection")
			}
			got, _ := os.ReadFile(filepath.Join(dest, "model.bin"))
			if !bytes.Equal(got, data) {
				t.Fatalf("downloaded %d bytes differ from the object's %d", len(got), len(data))
			}
			// Resumed, not read again from the start: well under twice the object crossed.
			if p.Sent() > size+size/2 {
				t.Errorf("%d bytes crossed the proxy for a %d-byte object: read again, not resumed", p.Sent(), size)
			}
			// The S3 and Azure SDKs leave a broken body to the caller: Download resumed it. GCS's
			// reader takes up a broken read itself, at the offset it had reached.
			if s.Type() != datastore.TypeGCS && st.Resumed == 0 {
				t.Errorf("stats %+v: no read resumed", st)
			}
			t.Logf("stats %+v, %d bytes through the proxy", st, p.Sent())
		})
	}
}

func TestErrorsNameTheDatastoreAndHideSecrets(t *testing.T) {
	for _, s := range objtest.All(t) {
		t.Run(objtest.Name(s), func(t *testing.T) {
			c := s.NewContainer(t)
			objtest.PutBytes(t, s, c, "p/x", []byte("x"))
			bad := s.BadCredentials(t)
			cases := []struct {
				name string
				loc  datastore.Location
				cred datastore.Credentials
				file bool
				want objstore.Kind
			}{
				{"bad credentials", s.Location(c, "p"), bad, false, objstore.KindAccessDenied},
				{"no such container", s.Location("missing-"+c, "p"), s.Credentials(), false, objstore.KindNoContainer},
				{"no such folder", s.Location(c, "nothing/here"), s.Credentials(), false, objstore.KindNotFound},
				{"no such file", s.Location(c, "p/y"), s.Credentials(), true, objstore.KindNotFound},
			}
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					dest := filepath.Join(t.TempDir(), "dest")
					b, err := objstore.Open(t.Context(), tc.loc, tc.cred)
					if err == nil {
						defer b.Close()
						_, err = b.Download(t.Context(), dest, objstore.DownloadOptions{File: tc.file})
					}
					var oe *objstore.Error
					if !errors.As(err, &oe) {
						t.Fatalf("got %v, want an *objstore.Error", err)
					}
					if oe.Kind != tc.want {
						t.Errorf("kind %q, want %q: %v", oe.Kind, tc.want, err)
					}
					msg := err.Error()
					if !strings.Contains(msg, tc.loc.String()) || !strings.Contains(msg, "datastore objtest-") {
						t.Errorf("message does not name the datastore and path %q: %s", tc.loc.String(), msg)
					}
					for _, v := range tc.cred.Values() {
						if strings.Contains(msg, v) || (len(v) > 40 && strings.Contains(msg, v[len(v)-40:])) {
							t.Errorf("message holds a credential: %s", msg)
						}
					}
					if _, err := os.Lstat(dest); !os.IsNotExist(err) {
						t.Errorf("a failed download left %s", dest)
					}
					t.Logf("%s", msg)
				})
			}
		})
	}
}

func TestUploadFolderReadBackWithTheStoresSDK(t *testing.T) {
	for _, s := range objtest.All(t) {
		t.Run(objtest.Name(s), func(t *testing.T) {
			c := s.NewContainer(t)
			src := t.TempDir()
			big := random(t, 9<<20+3)
			files := map[string][]byte{"model.pkl": big, "metrics/eval.json": []byte(`{"acc":0.9}`), "a b/ü.txt": []byte("unicode")}
			for rel, b := range files {
				p := filepath.Join(src, filepath.FromSlash(rel))
				os.MkdirAll(filepath.Dir(p), 0o755)
				if err := os.WriteFile(p, b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Symlink("/etc/passwd", filepath.Join(src, "link")); err != nil {
				t.Fatal(err)
			}
			st, err := open(t, s.Location(c, "outputs/run1"), s.Credentials()).Upload(t.Context(), src)
			if err != nil {
				t.Fatalf("Upload: %v", err)
			}
			if st.Objects != 3 || st.Bytes != int64(len(big)+11+7) {
				t.Errorf("stats %+v", st)
			}
			if len(st.Warnings) != 1 || !strings.Contains(st.Warnings[0], "symbolic link link") {
				t.Errorf("warnings %q, want the symbolic link named", st.Warnings)
			}
			want := []string{"outputs/run1/a b/ü.txt", "outputs/run1/metrics/eval.json", "outputs/run1/model.pkl"}
			if got := s.Keys(t, c, "outputs/"); strings.Join(got, "|") != strings.Join(want, "|") {
				t.Fatalf("keys %q, want %q", got, want)
			}
			for rel, b := range files {
				if got := s.Get(t, c, "outputs/run1/"+rel); !bytes.Equal(got, b) {
					t.Errorf("%s: read back %d bytes differ from the file's %d", rel, len(got), len(b))
				}
			}
			// One file to a path of its own (a uri_file output).
			if _, err := open(t, s.Location(c, "single/eval.json"), s.Credentials()).Upload(t.Context(), filepath.Join(src, "metrics", "eval.json")); err != nil {
				t.Fatalf("Upload file: %v", err)
			}
			if got := string(s.Get(t, c, "single/eval.json")); got != `{"acc":0.9}` {
				t.Errorf("single file reads %q", got)
			}
		})
	}
}

// The other kinds of credentials the stores take: an Azure SAS token (riding in the URL), a GCS
// service account whose token endpoint grants a token.
func TestOtherCredentials(t *testing.T) {
	az, gcs := objtest.Azure(t), objtest.GCS(t)
	cases := []struct {
		name string
		s    objtest.Store
		cred datastore.Credentials
	}{
		{"azure sas token", az, az.SAS(t)},
		{"adls gen2 through its blob endpoint", adls{az}, az.Credentials()},
		{"gcs service account", gcs, datastore.Credentials{ServiceAccountJSON: objtest.ServiceAccountJSON(t, true)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.s.NewContainer(t)
			objtest.PutBytes(t, tc.s, c, "in/x.txt", []byte("x"))
			b := open(t, tc.s.Location(c, "in"), tc.cred)
			dest := filepath.Join(t.TempDir(), "in")
			if _, err := b.Download(t.Context(), dest, objstore.DownloadOptions{}); err != nil {
				t.Fatalf("Download: %v", err)
			}
			if got := tree(t, dest)["x.txt"]; got != "x" {
				t.Errorf("x.txt reads %q", got)
			}
			src := t.TempDir()
			os.WriteFile(filepath.Join(src, "y.txt"), []byte("y"), 0o644)
			if _, err := open(t, tc.s.Location(c, "out"), tc.cred).Upload(t.Context(), src); err != nil {
				t.Fatalf("Upload: %v", err)
			}
			if got := string(tc.s.Get(t, c, "out/y.txt")); got != "y" {
				t.Errorf("out/y.txt reads %q", got)
			}
		})
	}
}

// adls is Azurite's blob service seen as an ADLS Gen2 datastore (read through the blob endpoint).
type adls struct{ *objtest.AzureServer }

func (a adls) Location(container, path string) datastore.Location {
	l := a.AzureServer.Location(container, path)
	l.Type = datastore.TypeADLSGen2
	return l
}

// A download that fails part-way (here: canceled once bytes have come) leaves nothing at the
// destination, nor its staging folder beside it.
func TestFailedDownloadLeavesNothing(t *testing.T) {
	s := objtest.S3(t)
	c := s.NewContainer(t)
	for i := range 6 {
		objtest.PutBytes(t, s, c, fmt.Sprintf("f/%d.bin", i), random(t, 4<<20))
	}
	p := objtest.NewProxy(t, strings.TrimPrefix(s.URL, "http://"))
	loc := s.Location(c, "f")
	loc.Endpoint = p.Rewrite(loc.Endpoint)
	b := open(t, loc, s.Credentials())
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	p.StallAfter(6 << 20)
	go func() {
		<-p.Stalled()
		cancel()
	}()
	parent := t.TempDir()
	dest := filepath.Join(parent, "f")
	cache := &objstore.Cache{Dir: t.TempDir()}
	if _, err := b.Download(ctx, dest, objstore.DownloadOptions{Cache: cache, Concurrency: 2}); err == nil {
		t.Fatal("a canceled download succeeded")
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Errorf("left beside the destination: %v", entries)
	}
	if tmp, _ := os.ReadDir(filepath.Join(cache.Dir, "tmp")); len(tmp) != 0 {
		t.Errorf("left in the cache's scratch folder: %v", tmp)
	}
}
