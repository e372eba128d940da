package objstore

import (
	"context"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/aws/aws-sdk-go-v2/aws"
	"golang.org/x/oauth2/google"
)

// A datastore (or direct URI) without credentials uses the node's ambient identity: the SDK's
// default chain (environment variables, shared config files, the instance's metadata service,
// workload identity). A node with none reads public data anonymously, as Azure ML reads the
// public containers its examples name (wasbs://datasets@azuremlexamples...). Each probe is bounded:
// a metadata service that does not answer costs at most ambientProbe.
const ambientProbe = 5 * time.Second

// ambientS3 reports whether the default chain finds credentials on this node.
func ambientS3(ctx context.Context, cfg aws.Config) bool {
	if cfg.Credentials == nil {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, ambientProbe)
	defer cancel()
	_, err := cfg.Credentials.Retrieve(ctx)
	return err == nil
}

// ambientAzure reports whether the default credential gets a storage token on this node.
func ambientAzure(ctx context.Context, tc azcore.TokenCredential) bool {
	ctx, cancel := context.WithTimeout(ctx, ambientProbe)
	defer cancel()
	_, err := tc.GetToken(ctx, policy.TokenRequestOptions{Scopes: []string{"https://storage.azure.com/.default"}})
	return err == nil
}

// ambientGCS reports whether Google's default credentials are on this node.
func ambientGCS(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, ambientProbe)
	defer cancel()
	_, err := google.FindDefaultCredentials(ctx, "https://www.googleapis.com/auth/devstorage.read_write")
	return err == nil
}
