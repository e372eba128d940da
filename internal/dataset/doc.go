// Package dataset holds data assets (az ml data): a name, integer versions (the shared
// asset concept of package asset), a type (uri_file, uri_folder, mltable) and where the files
// are: a content-addressed manifest in the workspace's blob store, or, for data that stays
// where it is (a local_folder datastore, an http(s) URL), the URI the job reads.
package dataset
