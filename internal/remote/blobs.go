package remote

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/hangar-ml/hangar/internal/blob"
)

// CacheDir is a host's blob cache, relative to the home directory. It has the layout of a blob.Store
// (<dir>/<aa>/<hash>, temporary files under <dir>/tmp), so the supervisor on the host opens it as one.
const CacheDir = ".hangar/cache/blobs"

// BlobSource gives the content of blobs by hash; *blob.Store is one.
type BlobSource interface {
	Open(hash string) (*os.File, error)
}

// PutStats says what PutBlobs did.
type PutStats struct {
	Present int   // blobs the host had already
	Sent    int   // blobs uploaded
	Bytes   int64 // content bytes uploaded
}

// MissingBlobs returns the hashes the cache in dir on the host lacks, in the order given and without
// duplicates, asking with one command however many there are.
func MissingBlobs(ctx context.Context, r Runner, dir string, hashes []string) ([]string, error) {
	uniq, err := uniqueHashes(hashes)
	if err != nil {
		return nil, err
	}
	if len(uniq) == 0 {
		return nil, nil
	}
	var list strings.Builder
	for _, h := range uniq {
		list.WriteString(h[:2] + "/" + h + "\n")
	}
	// A missing cache directory lacks everything: echo the list back.
	line := "cd " + Quote(dir) + " 2>/dev/null || { cat; exit 0; }; while read -r p; do [ -f \"$p\" ] || echo \"$p\"; done"
	out, err := output(ctx, r, Cmd{Line: line, Stdin: strings.NewReader(list.String())})
	if err != nil {
		return nil, fmt.Errorf("missing blobs in %s: %w", dir, err)
	}
	gone := map[string]bool{}
	for _, l := range strings.Fields(string(out)) {
		_, h, _ := strings.Cut(l, "/")
		gone[h] = true
	}
	var missing []string
	for _, h := range uniq {
		if gone[h] {
			missing = append(missing, h)
		}
	}
	return missing, nil
}

// PutBlobs uploads the blobs the cache in dir lacks, all in one tar stream over one session. The host
// unpacks them into <dir>/tmp, checks each one's SHA-256 against its name and moves it into place, so
// a blob visible in the cache is always complete and correct.
func PutBlobs(ctx context.Context, r Runner, dir string, src BlobSource, hashes []string) (PutStats, error) {
	missing, err := MissingBlobs(ctx, r, dir, hashes)
	if err != nil {
		return PutStats{}, err
	}
	uniq, _ := uniqueHashes(hashes)
	st := PutStats{Present: len(uniq) - len(missing)}
	if len(missing) == 0 {
		return st, nil
	}
	pr, pw := io.Pipe()
	written := make(chan struct{})
	var werr error
	go func() {
		defer close(written)
		werr = writeBlobTar(pw, src, missing, &st)
		pw.CloseWithError(werr)
	}()
	// One sha256sum for all files and one mv per two-character folder: a few processes for
	// thousands of blobs, not several per blob.
	script := "set -e; " + hashFunc + "mkdir -p " + Quote(dir) + "/tmp; d=$(cd " + Quote(dir) + " && pwd -P)\n" +
		"s=$(mktemp -d \"$d/tmp/incoming.XXXXXX\"); trap 'rm -rf \"$s\"' EXIT\n" +
		"tar -x -o -f - -C \"$s\"\ncd \"$s\"\n" +
		"if command -v sha256sum >/dev/null 2>&1; then ls | xargs sha256sum; else for h in $(ls); do echo \"$(sha < \"$h\")  $h\"; done; fi > ../sums.$$\n" +
		"bad=$(awk '$1 != $2 {print $2 \" has \" $1}' ../sums.$$); rm -f ../sums.$$\n" +
		"if [ -n \"$bad\" ]; then echo \"hash mismatch: $bad\" >&2; exit 1; fi\n" +
		"for p in $(ls | cut -c1-2 | sort -u); do mkdir -p \"$d/$p\"; ls | grep \"^$p\" | xargs mv -f -t \"$d/$p/\"; done\n"
	_, err = output(ctx, r, Cmd{Line: script, Stdin: pr})
	pr.CloseWithError(io.ErrClosedPipe) // stops the writer if the command ended early
	<-written
	if werr != nil && !errors.Is(werr, io.ErrClosedPipe) {
		return st, fmt.Errorf("put blobs in %s: %w", dir, werr)
	}
	if err != nil {
		return st, fmt.Errorf("put blobs in %s: %w", dir, err)
	}
	return st, nil
}

// writeBlobTar writes the blobs as a flat tar of files named by hash, counting what it sends.
func writeBlobTar(w io.Writer, src BlobSource, hashes []string, st *PutStats) error {
	tw := tar.NewWriter(w)
	now := time.Now().Truncate(time.Second) // whole seconds keep the headers plain ustar
	for _, h := range hashes {
		if err := func() error {
			f, err := src.Open(h)
			if err != nil {
				return fmt.Errorf("blob %s: %w", h, err)
			}
			defer f.Close()
			fi, err := f.Stat()
			if err != nil {
				return err
			}
			hdr := &tar.Header{Name: h, Mode: 0o644, Size: fi.Size(), ModTime: now, Typeflag: tar.TypeReg, Format: tar.FormatUSTAR}
			if err := tw.WriteHeader(hdr); err != nil {
				return err
			}
			n, err := io.Copy(tw, f)
			st.Bytes += n
			return err
		}(); err != nil {
			return err
		}
		st.Sent++
	}
	return tw.Close()
}

func uniqueHashes(hashes []string) ([]string, error) {
	seen := make(map[string]bool, len(hashes))
	var uniq []string
	for _, h := range hashes {
		if !blob.ValidHash(h) {
			return nil, fmt.Errorf("blob hash %q: %w", h, blob.ErrInvalidHash)
		}
		if !seen[h] {
			seen[h] = true
			uniq = append(uniq, h)
		}
	}
	return uniq, nil
}
