// Package atomicfile writes a file whole or not at all: through a temporary file beside it that
// is synced, then renamed over it, so that a reader, or the next start after a crash, finds the
// old content or the new, never a part.
package atomicfile
