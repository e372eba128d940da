package api

import (
	"context"
	"net/http"
)

// GCRequest asks the server to collect the blobs that nothing references (POST
// /api/workspace/gc, owners only).
type GCRequest struct {
	// DryRun lists what would be freed, and frees nothing.
	DryRun bool `json:"dry_run,omitempty"`
	// GraceSeconds keeps every blob younger than this (nil: the server's --blob-grace). A blob's
	// age counts from its upload, or from the last time the server said it had it.
	GraceSeconds *int64 `json:"grace_seconds,omitempty"`
}

// GCReport is what a collection freed, or in a dry run would free.
type GCReport struct {
	DryRun bool `json:"dry_run"`
	// Grace is the age under which blobs were kept whatever referenced them.
	Grace string `json:"grace"`
	// Blobs are those freed (or to free), largest first.
	Blobs []GCBlob `json:"blobs"`
	Count int      `json:"count"`
	Bytes int64    `json:"bytes"`
	// Kept counts the blobs that stay: referenced, or younger than the grace.
	Kept      int   `json:"kept"`
	KeptBytes int64 `json:"kept_bytes"`
}

// GCBlob is one blob a collection frees.
type GCBlob struct {
	Hash string `json:"hash"`
	Size int64  `json:"size"`
}

// CollectBlobs has the server free the blobs nothing references (see GCRequest).
func (c *WorkspaceClient) CollectBlobs(ctx context.Context, req GCRequest) (*GCReport, error) {
	return call[GCReport](ctx, c.client, http.MethodPost, "/api/workspace/gc", req)
}
