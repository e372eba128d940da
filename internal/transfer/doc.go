// Package transfer moves content-addressed blobs between a machine and the workspace server: only what the other side lacks travels.
package transfer
