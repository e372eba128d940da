package objtest

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Each store starts, makes a container, and its own SDK reads back what it wrote.
func TestStoresRoundTrip(t *testing.T) {
	for _, s := range All(t) {
		t.Run(Name(s), func(t *testing.T) {
			c := s.NewContainer(t)
			PutBytes(t, s, c, "d/a.txt", []byte("alpha"))
			PutBytes(t, s, c, "d/sub/b.bin", bytes.Repeat([]byte{7}, 1<<20))
			if got := string(s.Get(t, c, "d/a.txt")); got != "alpha" {
				t.Errorf("get d/a.txt = %q", got)
			}
			if got, want := s.Keys(t, c, "d/"), []string{"d/a.txt", "d/sub/b.bin"}; !equal(got, want) {
				t.Errorf("keys = %v, want %v", got, want)
			}
		})
	}
}

// The proxy relays, and a cut closes the connections once the armed count has passed.
func TestProxyCuts(t *testing.T) {
	s := S3(t)
	p := NewProxy(t, s.URL[len("http://"):])
	resp, err := http.Get(p.Rewrite(s.URL))
	if err != nil {
		t.Fatalf("through the proxy: %v", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if p.Sent() == 0 {
		t.Fatal("the proxy counted nothing sent")
	}
	c := s.NewContainer(t)
	PutBytes(t, s, c, "big", bytes.Repeat([]byte{1}, 8<<20))
	p.CutAfter(1 << 20)
	client := s.NewClient(p.Rewrite(s.URL), s.AccessKey, s.SecretKey)
	out, err := client.GetObject(t.Context(), &s3.GetObjectInput{Bucket: &c, Key: aws.String("big")})
	if err != nil {
		t.Fatalf("get through the proxy: %v", err)
	}
	n, err := io.Copy(io.Discard, out.Body)
	out.Body.Close()
	if err == nil || n >= 8<<20 {
		t.Errorf("read %d bytes, err %v: want a cut short of 8 MiB", n, err)
	}
	if !p.Cut() {
		t.Errorf("no cut after %d bytes sent", p.Sent())
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
