package objtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/hangar-ml/hangar/internal/datastore"
)

// S3Server is a running versitygw (posix backend) with one access key pair.
type S3Server struct {
	URL       string // http://host:port
	AccessKey string
	SecretKey string
	Region    string
	Dir       string // the posix backend's folder: one subfolder a bucket
	Client    *s3.Client
}

// S3 is the versitygw of this test binary on 127.0.0.1.
func S3(t testing.TB) *S3Server { return S3At(t, "127.0.0.1") }

// S3At is the versitygw of this test binary listening on host (an address of this machine: a
// network namespace's bridge, say), started on first use.
func S3At(t testing.TB, host string) *S3Server {
	t.Helper()
	bin := tool(t, "HANGAR_VERSITYGW", "versitygw")
	return shared(t, "versitygw", host, func() (*S3Server, error) {
		s := &S3Server{AccessKey: "hangartestkey", SecretKey: "hangar-test-secret-" + containerName(), Region: "us-east-1"}
		addr, dir, err := launch("versitygw", host, func(port int, data string) []string {
			return []string{bin, "--access", s.AccessKey, "--secret", s.SecretKey, "--region", s.Region,
				"--port", fmt.Sprintf("%s:%d", host, port), "posix", data}
		}, nil)
		if err != nil {
			return nil, err
		}
		s.URL, s.Dir = "http://"+addr, dir+"/data"
		s.Client = s.NewClient(s.URL, s.AccessKey, s.SecretKey)
		return s, nil
	})
}

// NewClient is an S3 client of the SDK for endpoint (path-style) with a key pair.
func (s *S3Server) NewClient(endpoint, key, secret string) *s3.Client {
	return s3.New(s3.Options{
		Region:                     s.Region,
		BaseEndpoint:               aws.String(endpoint),
		UsePathStyle:               true,
		Credentials:                credentials.NewStaticCredentialsProvider(key, secret, ""),
		RetryMaxAttempts:           3,
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	})
}

func (s *S3Server) Type() string     { return datastore.TypeS3 }
func (s *S3Server) Endpoint() string { return s.URL }

func (s *S3Server) NewContainer(t testing.TB) string {
	t.Helper()
	name := containerName()
	if _, err := s.Client.CreateBucket(ctx(t), &s3.CreateBucketInput{Bucket: &name}); err != nil {
		t.Fatalf("versitygw: create bucket %s: %v", name, err)
	}
	return name
}

func (s *S3Server) Put(t testing.TB, bucket, key string, r io.Reader, size int64) {
	t.Helper()
	if rs, ok := r.(io.ReadSeeker); !ok || size > 64<<20 {
		s.putMultipart(t, bucket, key, r, size)
		return
	} else if _, err := s.Client.PutObject(ctx(t), &s3.PutObjectInput{Bucket: &bucket, Key: &key, Body: rs, ContentLength: &size}); err != nil {
		t.Fatalf("versitygw: put %s/%s: %v", bucket, key, err)
	}
}

// putMultipart streams r in 16 MiB parts.
func (s *S3Server) putMultipart(t testing.TB, bucket, key string, r io.Reader, size int64) {
	t.Helper()
	c := ctx(t)
	up, err := s.Client.CreateMultipartUpload(c, &s3.CreateMultipartUploadInput{Bucket: &bucket, Key: &key})
	if err != nil {
		t.Fatalf("versitygw: start upload %s/%s: %v", bucket, key, err)
	}
	var parts []s3types.CompletedPart
	buf := make([]byte, 16<<20)
	for n := int32(1); ; n++ {
		k, err := io.ReadFull(r, buf)
		if k > 0 {
			body := bytes.NewReader(buf[:k])
			out, perr := s.Client.UploadPart(c, &s3.UploadPartInput{Bucket: &bucket, Key: &key, UploadId: up.UploadId, PartNumber: aws.Int32(n), Body: body, ContentLength: aws.Int64(int64(k))})
			if perr != nil {
				t.Fatalf("versitygw: upload part %d of %s/%s: %v", n, bucket, key, perr)
			}
			parts = append(parts, s3types.CompletedPart{ETag: out.ETag, PartNumber: aws.Int32(n)})
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			break
		}
		if err != nil {
			t.Fatalf("versitygw: read %s: %v", key, err)
		}
	}
	if _, err := s.Client.CompleteMultipartUpload(c, &s3.CompleteMultipartUploadInput{Bucket: &bucket, Key: &key, UploadId: up.UploadId,
		MultipartUpload: &s3types.CompletedMultipartUpload{Parts: parts}}); err != nil {
		t.Fatalf("versitygw: complete upload %s/%s: %v", bucket, key, err)
	}
}

func (s *S3Server) Get(t testing.TB, bucket, key string) []byte {
	t.Helper()
	out, err := s.Client.GetObject(ctx(t), &s3.GetObjectInput{Bucket: &bucket, Key: &key})
	if err != nil {
		t.Fatalf("versitygw: get %s/%s: %v", bucket, key, err)
	}
	defer out.Body.Close()
	b, err := io.ReadAll(out.Body)
	if err != nil {
		t.Fatalf("versitygw: read %s/%s: %v", bucket, key, err)
	}
	return b
}

func (s *S3Server) Keys(t testing.TB, bucket, prefix string) []string {
	t.Helper()
	var keys []string
	p := s3.NewListObjectsV2Paginator(s.Client, &s3.ListObjectsV2Input{Bucket: &bucket, Prefix: &prefix})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx(t))
		if err != nil {
			t.Fatalf("versitygw: list %s/%s: %v", bucket, prefix, err)
		}
		for _, o := range page.Contents {
			keys = append(keys, aws.ToString(o.Key))
		}
	}
	sort.Strings(keys)
	return keys
}

func (s *S3Server) Location(bucket, path string) datastore.Location {
	return datastore.Location{Datastore: "objtest-s3", Type: datastore.TypeS3, Container: bucket, Endpoint: s.URL, Region: s.Region, Path: path}
}

func (s *S3Server) Credentials() datastore.Credentials {
	return datastore.Credentials{AccessKeyID: s.AccessKey, SecretAccessKey: s.SecretKey}
}

func (s *S3Server) BadCredentials(testing.TB) datastore.Credentials {
	return datastore.Credentials{AccessKeyID: s.AccessKey, SecretAccessKey: "wrong-secret-" + containerName()}
}

// ctx is the test's context with a bound, for the SDK calls of the helpers.
func ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return c
}

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }
