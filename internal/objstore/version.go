package objstore

import (
	"strconv"

	"cloud.google.com/go/storage"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	azblobblob "github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"gocloud.dev/blob"
)

// An object's version is what changes when its content does: the ETag on S3 and Azure, the
// generation on GCS. The node cache is keyed by it, and a resumed read asks for the same one.

// listedVersion reads the version from a listing, without a request of its own.
func listedVersion(o *blob.ListObject) string {
	var s3o s3types.Object
	if o.As(&s3o) {
		return aws.ToString(s3o.ETag)
	}
	var az container.BlobItem
	if o.As(&az) && az.Properties != nil && az.Properties.ETag != nil {
		return string(*az.Properties.ETag)
	}
	var g storage.ObjectAttrs
	if o.As(&g) {
		return "g" + strconv.FormatInt(g.Generation, 10)
	}
	return ""
}

// attrsVersion reads the version from an object's attributes.
func attrsVersion(a *blob.Attributes) string {
	var g storage.ObjectAttrs
	if a.As(&g) {
		return "g" + strconv.FormatInt(g.Generation, 10)
	}
	return a.ETag
}

// ifVersion makes a read fail with a precondition error when the object is no longer version v.
func ifVersion(v string) func(as func(any) bool) error {
	return func(as func(any) bool) error {
		if v == "" {
			return nil
		}
		var in *s3.GetObjectInput
		if as(&in) {
			in.IfMatch = aws.String(v)
			return nil
		}
		var az *azblobblob.DownloadStreamOptions
		if as(&az) {
			etag := azcore.ETag(v)
			if az.AccessConditions == nil {
				az.AccessConditions = &azblobblob.AccessConditions{}
			}
			if az.AccessConditions.ModifiedAccessConditions == nil {
				az.AccessConditions.ModifiedAccessConditions = &azblobblob.ModifiedAccessConditions{}
			}
			az.AccessConditions.ModifiedAccessConditions.IfMatch = &etag
			return nil
		}
		var h **storage.ObjectHandle
		if as(&h) && len(v) > 1 && v[0] == 'g' {
			if gen, err := strconv.ParseInt(v[1:], 10, 64); err == nil {
				*h = (*h).If(storage.Conditions{GenerationMatch: gen})
			}
		}
		return nil
	}
}
