package objstore_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"golang.org/x/sync/errgroup"

	"github.com/hangar-ml/hangar/internal/objstore"
	"github.com/hangar-ml/hangar/internal/objstore/objtest"
)

// BenchmarkFolderFromS3 reads a folder of objects (64 × 32 MiB = 2 GiB by default;
// HANGAR_BENCH_OBJECTS and HANGAR_BENCH_OBJECT_MIB change it) from the test bed's versitygw into
// a fresh folder, three ways in the same run (BENCHMARKS.md), the first two twice in the order
// sdk, objstore, objstore, sdk:
//
//   - sdk: the baseline, aws-sdk-go-v2's GetObject for every listed key, as many at once as
//     Download reads (4), each body copied to its file;
//
//   - objstore: Download into a fresh folder with a cold node cache (read-only: the files are
//     copies of the cache's);
//
//   - cached: Download again with the cache warm; it reports the object bytes fetched (goal: 0)
//     and the bytes that crossed the wire both ways (the listing), counted by a proxy.
//
//     go test -run x -bench FolderFromS3 -benchtime 1x -count 3 ./internal/objstore/
func BenchmarkFolderFromS3(b *testing.B) {
	s := objtest.S3(b)
	bucket, total := benchFolder(b, s)
	loc := s.Location(bucket, "bench")
	scratch := b.TempDir()

	sdk := func(b *testing.B) {
		b.SetBytes(total)
		for i := 0; i < b.N; i++ {
			dest := filepath.Join(scratch, "sdk")
			if err := sdkCopy(b.Context(), s.Client, bucket, "bench/", dest); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			os.RemoveAll(dest)
			b.StartTimer()
		}
	}
	ours := func(b *testing.B) {
		b.SetBytes(total)
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			cache := &objstore.Cache{Dir: filepath.Join(scratch, "cache")}
			os.RemoveAll(cache.Dir)
			bk, err := objstore.Open(b.Context(), loc, s.Credentials())
			if err != nil {
				b.Fatal(err)
			}
			dest := filepath.Join(scratch, "objstore")
			b.StartTimer()
			st, err := bk.Download(b.Context(), dest, objstore.DownloadOptions{Cache: cache, ReadOnly: true})
			if err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if st.FetchedBytes != total {
				b.Fatalf("fetched %d bytes of %d", st.FetchedBytes, total)
			}
			bk.Close()
			os.RemoveAll(dest)
			os.RemoveAll(cache.Dir)
			b.StartTimer()
		}
	}
	// ABBA, so that neither gains from going first (the page cache, the upload's writeback).
	b.Run("sdk", sdk)
	b.Run("objstore", ours)
	b.Run("objstore", ours)
	b.Run("sdk", sdk)
	b.Run("cached", func(b *testing.B) {
		b.StopTimer()
		p := objtest.NewProxy(b, s.URL[len("http://"):])
		ploc := loc
		ploc.Endpoint = p.Rewrite(loc.Endpoint)
		cache := &objstore.Cache{Dir: filepath.Join(scratch, "warm-cache")}
		bk, err := objstore.Open(b.Context(), ploc, s.Credentials())
		if err != nil {
			b.Fatal(err)
		}
		defer bk.Close()
		if _, err := bk.Download(b.Context(), filepath.Join(scratch, "warm"), objstore.DownloadOptions{Cache: cache, ReadOnly: true}); err != nil {
			b.Fatal(err)
		}
		os.RemoveAll(filepath.Join(scratch, "warm"))
		b.SetBytes(total)
		var fetched, wire int64
		for i := 0; i < b.N; i++ {
			dest := filepath.Join(scratch, "cached")
			before := p.Sent()
			b.StartTimer()
			st, err := bk.Download(b.Context(), dest, objstore.DownloadOptions{Cache: cache, ReadOnly: true})
			b.StopTimer()
			if err != nil {
				b.Fatal(err)
			}
			fetched += st.FetchedBytes
			wire += p.Sent() - before
			os.RemoveAll(dest)
		}
		b.ReportMetric(float64(fetched)/float64(b.N), "object-bytes-fetched/op")
		b.ReportMetric(float64(wire)/float64(b.N), "bytes-from-store/op")
		os.RemoveAll(cache.Dir)
	})
}

var benchCount, benchMiB = envInt("HANGAR_BENCH_OBJECTS", 64), envInt("HANGAR_BENCH_OBJECT_MIB", 32)

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// benchFolder writes the folder with the store's own SDK, and deletes it when the benchmark ends.
func benchFolder(b *testing.B, s *objtest.S3Server) (string, int64) {
	bucket := s.NewContainer(b)
	buf := make([]byte, benchMiB<<20)
	rand.Read(buf)
	var total int64
	for i := 0; i < benchCount; i++ {
		key := fmt.Sprintf("bench/part-%04d.bin", i)
		copy(buf, key) // each object its own content
		s.Put(b, bucket, key, bytes.NewReader(buf), int64(len(buf)))
		total += int64(len(buf))
		b.Cleanup(func() {
			s.Client.DeleteObject(context.Background(), &s3.DeleteObjectInput{Bucket: &bucket, Key: &key})
		})
	}
	return bucket, total
}

// sdkCopy is the baseline: list, then GetObject each key, four at a time, body to file.
func sdkCopy(ctx context.Context, c *s3.Client, bucket, prefix, dest string) error {
	var keys []string
	pg := s3.NewListObjectsV2Paginator(c, &s3.ListObjectsV2Input{Bucket: &bucket, Prefix: &prefix})
	for pg.HasMorePages() {
		page, err := pg.NextPage(ctx)
		if err != nil {
			return err
		}
		for _, o := range page.Contents {
			keys = append(keys, aws.ToString(o.Key))
		}
	}
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(4)
	for _, k := range keys {
		g.Go(func() error {
			out, err := c.GetObject(gctx, &s3.GetObjectInput{Bucket: &bucket, Key: &k})
			if err != nil {
				return err
			}
			defer out.Body.Close()
			f, err := os.Create(filepath.Join(dest, filepath.Base(k)))
			if err != nil {
				return err
			}
			if _, err := io.Copy(f, out.Body); err != nil {
				f.Close()
				return err
			}
			return f.Close()
		})
	}
	return g.Wait()
}
