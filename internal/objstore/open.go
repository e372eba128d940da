package objstore

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"cloud.google.com/go/storage"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	awscreds "github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"gocloud.dev/blob"
	"gocloud.dev/blob/azureblob"
	"gocloud.dev/blob/gcsblob"
	"gocloud.dev/blob/s3blob"
	"google.golang.org/api/option"

	"github.com/hangar-ml/hangar/internal/datastore"
)

// DefaultS3Region is the region an S3 location without one is signed for (AWS's own default,
// and what S3-compatible servers accept).
const DefaultS3Region = "us-east-1"

// Bucket is an opened object store container (an S3 or GCS bucket, an Azure container or ADLS
// Gen2 filesystem) with the location inside it that Download and Upload work on.
type Bucket struct {
	loc     datastore.Location
	secrets []string
	b       *blob.Bucket
	closers []func() error
}

// Location is where the bucket was opened.
func (b *Bucket) Location() datastore.Location { return b.loc }

// Close releases the clients.
func (b *Bucket) Close() error {
	err := b.b.Close()
	for _, c := range b.closers {
		if e := c(); err == nil {
			err = e
		}
	}
	return err
}

// Open opens loc's container with cred; the zero Credentials are the node's ambient identity
// (the SDKs' default chains). Nothing is sent to the store until the first read or write.
func Open(ctx context.Context, loc datastore.Location, cred datastore.Credentials) (*Bucket, error) {
	bk := &Bucket{loc: loc, secrets: cred.Values()}
	if loc.Container == "" {
		return nil, bk.newError("open", "", KindInvalid, fmt.Errorf("no bucket or container named"))
	}
	var err error
	switch loc.Type {
	case datastore.TypeS3:
		bk.b, err = openS3(ctx, loc, cred)
	case datastore.TypeAzureBlob, datastore.TypeADLSGen2:
		bk.b, err = openAzure(ctx, loc, cred)
	case datastore.TypeGCS:
		bk.b, bk.closers, err = openGCS(ctx, loc, cred)
	default:
		err = fmt.Errorf("datastore type %q is not an object store Hangar reads (one of %s)", loc.Type, strings.Join(datastore.ObjectTypes, ", "))
		return nil, bk.newError("open", "", KindInvalid, err)
	}
	if err != nil {
		return nil, bk.newError("open", "", KindInvalid, err)
	}
	return bk, nil
}

func openS3(ctx context.Context, loc datastore.Location, cred datastore.Credentials) (*blob.Bucket, error) {
	region := loc.Region
	if region == "" {
		region = DefaultS3Region
	}
	opts := []func(*awsconfig.LoadOptions) error{awsconfig.WithRegion(region)}
	if cred.AccessKeyID != "" {
		opts = append(opts, awsconfig.WithCredentialsProvider(
			awscreds.NewStaticCredentialsProvider(cred.AccessKeyID, cred.SecretAccessKey, cred.SessionToken)))
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("s3 configuration: %w", err)
	}
	if cred.AccessKeyID == "" && !ambientS3(ctx, cfg) {
		cfg.Credentials = aws.AnonymousCredentials{} // public data: nothing to sign with
	}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) {
		if loc.Endpoint != "" {
			o.BaseEndpoint = aws.String(strings.TrimRight(loc.Endpoint, "/"))
			o.UsePathStyle = true
		}
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
	})
	// S3-compatible servers do not all take the SDK's newer default checksums.
	return s3blob.OpenBucket(ctx, client, loc.Container, &s3blob.Options{
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
	})
}

func openAzure(ctx context.Context, loc datastore.Location, cred datastore.Credentials) (*blob.Bucket, error) {
	if loc.Endpoint == "" {
		return nil, fmt.Errorf("no blob service endpoint")
	}
	containerURL := strings.TrimRight(loc.Endpoint, "/") + "/" + loc.Container
	var (
		client *container.Client
		err    error
	)
	switch {
	case cred.AccountKey != "":
		var key *azblob.SharedKeyCredential
		key, err = azblob.NewSharedKeyCredential(loc.Account, cred.AccountKey)
		if err == nil {
			client, err = container.NewClientWithSharedKeyCredential(containerURL, key, nil)
		}
	case cred.SASToken != "":
		client, err = container.NewClientWithNoCredential(containerURL+"?"+strings.TrimPrefix(cred.SASToken, "?"), nil)
	default:
		var tc azcore.TokenCredential
		tc, err = azureToken(cred)
		switch {
		case err == nil && (cred.ClientSecret != "" || ambientAzure(ctx, tc)):
			client, err = container.NewClient(containerURL, tc, nil)
		case cred.ClientSecret == "":
			// No identity on the node: a public container is read anonymously.
			client, err = container.NewClientWithNoCredential(containerURL, nil)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("azure credentials (%s): %w", credKind(cred), err)
	}
	return azureblob.OpenBucket(ctx, client, nil)
}

func azureToken(cred datastore.Credentials) (azcore.TokenCredential, error) {
	if cred.ClientSecret != "" {
		return azidentity.NewClientSecretCredential(cred.TenantID, cred.ClientID, cred.ClientSecret, nil)
	}
	return azidentity.NewDefaultAzureCredential(nil)
}

func openGCS(ctx context.Context, loc datastore.Location, cred datastore.Credentials) (*blob.Bucket, []func() error, error) {
	var opts []option.ClientOption
	switch {
	case cred.ServiceAccountJSON != "":
		opts = append(opts, option.WithAuthCredentialsJSON(option.ServiceAccount, []byte(cred.ServiceAccountJSON)))
	case loc.Endpoint != "" || !ambientGCS(ctx):
		// An emulator, or a node with no Google identity: a public bucket is read anonymously.
		opts = append(opts, option.WithoutAuthentication(), option.WithHTTPClient(&http.Client{}))
	}
	if loc.Endpoint != "" {
		// Reads through the JSON API: the XML API's routes depend on the Host an emulator
		// believes it is, which a node reaching it by another address does not send.
		opts = append(opts, option.WithEndpoint(strings.TrimRight(loc.Endpoint, "/")+"/storage/v1/"), storage.WithJSONReads())
	}
	client, err := storage.NewClient(ctx, opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("gcs client (%s): %w", credKind(cred), err)
	}
	b, err := gcsblob.OpenBucket(ctx, nil, loc.Container, &gcsblob.Options{Client: client})
	if err != nil {
		client.Close()
		return nil, nil, err
	}
	return b, []func() error{client.Close}, nil
}

func credKind(c datastore.Credentials) string {
	if k := c.Kind(); k != "" {
		return k
	}
	return "the node's identity"
}
