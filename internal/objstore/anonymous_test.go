package objstore_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/hangar-ml/hangar/internal/datastore"
	"github.com/hangar-ml/hangar/internal/objstore"
	"github.com/hangar-ml/hangar/internal/objstore/objtest"
)

// A location without credentials on a node with no identity of the cloud's (this machine has
// none of Azure's) reads a public container anonymously, as Azure ML reads the public
// containers its examples name; a private one is refused as access denied.
func TestNoCredentialsReadPublicDataAnonymously(t *testing.T) {
	for _, v := range []string{"AZURE_CLIENT_ID", "AZURE_TENANT_ID", "AZURE_CLIENT_SECRET", "AZURE_FEDERATED_TOKEN_FILE", "IDENTITY_ENDPOINT", "MSI_ENDPOINT"} {
		t.Setenv(v, "")
	}
	s := objtest.Azure(t)
	public := strings.ToLower(strings.ReplaceAll(t.Name(), "_", ""))[:20] + "pub"
	access := container.PublicAccessTypeContainer
	if _, err := s.Client.CreateContainer(t.Context(), public, &azblob.CreateContainerOptions{Access: &access}); err != nil {
		t.Fatal(err)
	}
	s.Put(t, public, "data/iris.csv", strings.NewReader("a,b\n1,2\n"), 8)
	dest := filepath.Join(t.TempDir(), "in")
	b := open(t, s.Location(public, "data"), datastore.Credentials{})
	if _, err := b.Download(t.Context(), dest, objstore.DownloadOptions{}); err != nil {
		t.Fatalf("anonymous read of a public container: %v", err)
	}
	if got, err := os.ReadFile(filepath.Join(dest, "iris.csv")); err != nil || string(got) != "a,b\n1,2\n" {
		t.Fatalf("iris.csv: %q, %v", got, err)
	}

	private := s.NewContainer(t)
	s.Put(t, private, "data/x", strings.NewReader("x"), 1)
	_, err := open(t, s.Location(private, "data"), datastore.Credentials{}).Download(t.Context(), filepath.Join(t.TempDir(), "p"), objstore.DownloadOptions{})
	var oe *objstore.Error
	if !errors.As(err, &oe) || oe.Kind != objstore.KindAccessDenied {
		t.Fatalf("anonymous read of a private container: %v, want access denied", err)
	}
}
