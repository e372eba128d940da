// Package blob stores immutable blobs on disk, named by the SHA-256 of their content.
package blob
