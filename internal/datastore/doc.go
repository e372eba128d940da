// Package datastore holds datastores (az ml datastore) and the pure reading of
// azureml://datastores/<name>/paths/<path> URIs. Every workspace has workspaceblobstore: a view of
// its own content-addressed blob store, where paths are written by uploads and job outputs
// (recorded as Entry rows). A local_folder datastore names a folder on a shared filesystem that
// nodes of the listed compute targets mount at the same path; inputs under it are read in place.
package datastore
