// Package snapshot turns directory trees into content-addressed manifests and back: scanning with ignore rules, hashing, bundling for upload and materializing safely.
package snapshot
