package objtest

import (
	"fmt"
	"io"
	"sort"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"

	"github.com/hangar-ml/hangar/internal/datastore"
)

// Azurite's well-known development account (the emulator's documented default).
const (
	AzuriteAccount = "devstoreaccount1"
	AzuriteKey     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

// AzureServer is a running Azurite blob service (in memory).
type AzureServer struct {
	URL    string // http://host:port/devstoreaccount1, the account's blob endpoint
	Client *azblob.Client
	key    *azblob.SharedKeyCredential
}

// Azure is the Azurite of this test binary on 127.0.0.1.
func Azure(t testing.TB) *AzureServer { return AzureAt(t, "127.0.0.1") }

// AzureAt is the Azurite of this test binary listening on host, started on first use.
func AzureAt(t testing.TB, host string) *AzureServer {
	t.Helper()
	bin := tool(t, "HANGAR_AZURITE", "azurite-blob")
	return shared(t, "azurite", host, func() (*AzureServer, error) {
		addr, _, err := launch("azurite", host, func(port int, data string) []string {
			return []string{bin, "--blobHost", host, "--blobPort", fmt.Sprint(port), "--inMemoryPersistence",
				"--loose", "--skipApiVersionCheck", "--disableProductStyleUrl"}
		}, nil)
		if err != nil {
			return nil, err
		}
		s := &AzureServer{URL: "http://" + addr + "/" + AzuriteAccount}
		s.key, err = azblob.NewSharedKeyCredential(AzuriteAccount, AzuriteKey)
		if err != nil {
			return nil, err
		}
		s.Client, err = azblob.NewClientWithSharedKeyCredential(s.URL+"/", s.key, nil)
		return s, err
	})
}

func (s *AzureServer) Type() string     { return datastore.TypeAzureBlob }
func (s *AzureServer) Endpoint() string { return s.URL }

func (s *AzureServer) NewContainer(t testing.TB) string {
	t.Helper()
	name := containerName()
	if _, err := s.Client.CreateContainer(ctx(t), name, nil); err != nil {
		t.Fatalf("azurite: create container %s: %v", name, err)
	}
	return name
}

func (s *AzureServer) Put(t testing.TB, container, key string, r io.Reader, size int64) {
	t.Helper()
	if _, err := s.Client.UploadStream(ctx(t), container, key, r, nil); err != nil {
		t.Fatalf("azurite: put %s/%s: %v", container, key, err)
	}
}

func (s *AzureServer) Get(t testing.TB, container, key string) []byte {
	t.Helper()
	resp, err := s.Client.DownloadStream(ctx(t), container, key, nil)
	if err != nil {
		t.Fatalf("azurite: get %s/%s: %v", container, key, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("azurite: read %s/%s: %v", container, key, err)
	}
	return b
}

func (s *AzureServer) Keys(t testing.TB, container, prefix string) []string {
	t.Helper()
	var keys []string
	p := s.Client.NewListBlobsFlatPager(container, &azblob.ListBlobsFlatOptions{Prefix: &prefix})
	for p.More() {
		page, err := p.NextPage(ctx(t))
		if err != nil {
			t.Fatalf("azurite: list %s/%s: %v", container, prefix, err)
		}
		for _, b := range page.Segment.BlobItems {
			keys = append(keys, *b.Name)
		}
	}
	sort.Strings(keys)
	return keys
}

func (s *AzureServer) Location(container, path string) datastore.Location {
	return datastore.Location{Datastore: "objtest-azure", Type: datastore.TypeAzureBlob, Account: AzuriteAccount, Container: container, Endpoint: s.URL, Path: path}
}

func (s *AzureServer) Credentials() datastore.Credentials {
	return datastore.Credentials{AccountKey: AzuriteKey}
}

// BadCredentials are a SAS token signed with another key: a secret that rides in the URL, which
// the store refuses.
func (s *AzureServer) BadCredentials(t testing.TB) datastore.Credentials {
	t.Helper()
	other, err := azblob.NewSharedKeyCredential(AzuriteAccount, "d3Jvbmd3cm9uZ3dyb25nd3Jvbmd3cm9uZ3dyb25nd3Jvbmc=")
	if err != nil {
		t.Fatal(err)
	}
	return datastore.Credentials{SASToken: s.sas(t, other)}
}

// SAS is a good account SAS token (read, write, list, create) for a day.
func (s *AzureServer) SAS(t testing.TB) datastore.Credentials {
	t.Helper()
	return datastore.Credentials{SASToken: s.sas(t, s.key)}
}

func (s *AzureServer) sas(t testing.TB, key *azblob.SharedKeyCredential) string {
	t.Helper()
	v := sas.AccountSignatureValues{
		Protocol:      sas.ProtocolHTTPSandHTTP,
		ExpiryTime:    time.Now().Add(24 * time.Hour),
		Permissions:   (&sas.AccountPermissions{Read: true, Write: true, List: true, Create: true, Add: true}).String(),
		ResourceTypes: (&sas.AccountResourceTypes{Service: true, Container: true, Object: true}).String(),
	}
	q, err := v.SignWithSharedKey(key)
	if err != nil {
		t.Fatalf("sign a SAS: %v", err)
	}
	return q.Encode()
}
