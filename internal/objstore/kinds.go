package objstore

import (
	"errors"
	"fmt"
	"net/http"

	gauth "cloud.google.com/go/auth"
	"cloud.google.com/go/storage"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
	"golang.org/x/oauth2"
	"google.golang.org/api/googleapi"
)

// driverKind reads the store's own error codes; "" when none says.
func (b *Bucket) driverKind(err error) Kind {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		switch ae.ErrorCode() {
		case "NoSuchBucket":
			return KindNoContainer
		case "NoSuchKey", "NotFound":
			return KindNotFound
		case "AccessDenied", "Forbidden", "InvalidAccessKeyId", "SignatureDoesNotMatch", "ExpiredToken", "InvalidToken":
			return KindAccessDenied
		}
	}
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		if k := statusKind(re.HTTPStatusCode()); k != "" {
			return k
		}
	}
	var az *azcore.ResponseError
	if errors.As(err, &az) {
		switch az.ErrorCode {
		case "ContainerNotFound", "FilesystemNotFound":
			return KindNoContainer
		case "BlobNotFound", "PathNotFound", "ResourceNotFound":
			return KindNotFound
		case "AuthenticationFailed", "AuthorizationFailure", "AuthorizationPermissionMismatch", "InsufficientAccountPermissions", "NoAuthenticationInformation":
			return KindAccessDenied
		}
		if k := statusKind(az.StatusCode); k != "" {
			return k
		}
	}
	var azAuth *azidentity.AuthenticationFailedError
	if errors.As(err, &azAuth) {
		return KindAccessDenied
	}
	if errors.Is(err, storage.ErrBucketNotExist) {
		return KindNoContainer
	}
	if errors.Is(err, storage.ErrObjectNotExist) {
		return KindNotFound
	}
	var gauth *gauth.Error
	if errors.As(err, &gauth) {
		return KindAccessDenied // the token endpoint refused the service account
	}
	var rerr *oauth2.RetrieveError
	if errors.As(err, &rerr) {
		return KindAccessDenied
	}
	var ge *googleapi.Error
	if errors.As(err, &ge) {
		return statusKind(ge.Code)
	}
	return ""
}

func statusKind(code int) Kind {
	switch code {
	case http.StatusUnauthorized, http.StatusForbidden:
		return KindAccessDenied
	case http.StatusNotFound:
		return KindNotFound
	}
	return ""
}

// describe is err's message on one line: Azure's SDK answers with the request, the response's
// headers and its body over many lines, of which the status and the error code say it all.
func describe(err error) string {
	var az *azcore.ResponseError
	if errors.As(err, &az) {
		msg := fmt.Sprintf("the store answered %d", az.StatusCode)
		if az.ErrorCode != "" {
			msg += " " + az.ErrorCode
		}
		return msg
	}
	return err.Error()
}
