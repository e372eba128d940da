// Package objtest runs, for tests, the real object stores of the test bed (issue 31): versitygw
// (an S3 gateway over a folder, SigV4 auth with an access key pair), Azurite's blob service (the
// Azure Storage emulator, shared key auth with its well-known account) and fake-gcs-server (Google
// Cloud Storage's APIs), each started once per test binary on 127.0.0.1 (or once per address a
// test asks for), from the binaries scripts/setup/objstores.sh installs ($HANGAR_VERSITYGW,
// $HANGAR_AZURITE, $HANGAR_FAKE_GCS). Without one the test skips, or fails when CI is set.
//
// Tests read and write objects with each store's own SDK (aws-sdk-go-v2's s3, azblob,
// cloud.google.com/go/storage), not through internal/objstore, so that they read back what a user
// gets. Proxy is a TCP relay that can cut every connection mid-transfer.
package objtest
