// Package objstore reads and writes a job's data where it lies in an object store (Azure Blob,
// ADLS Gen2 through its blob endpoint, S3 and S3-compatible servers, Google Cloud Storage) from a
// node, with the datastore's credentials, through gocloud.dev's portable blob layer: Open a
// Location, Download it into a run (a node cache keyed by each object's version, resumed after a
// cut), Upload an output folder. Its errors are typed, name the datastore and path, and never
// carry a credential.
package objstore
