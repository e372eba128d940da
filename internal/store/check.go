package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// DamagedError means a database file exists but cannot be used: it is not SQLite, it is cut
// short, or SQLite found it malformed. The server must not start over it (nor create a new one).
type DamagedError struct {
	Path   string
	Reason string // what is wrong, for people
	Err    error  // SQLite's own error, when it found the damage
}

func (e *DamagedError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("database %s %s: %v", e.Path, e.Reason, e.Err)
	}
	return fmt.Sprintf("database %s %s", e.Path, e.Reason)
}

func (e *DamagedError) Unwrap() error { return e.Err }

// sqliteMagic starts every SQLite 3 database file.
const sqliteMagic = "SQLite format 3\x00"

// headerSize is the size of the database header that page 1 starts with.
const headerSize = 100

// checkFile looks at the file at path before SQLite opens it: a missing or empty file is fine
// (SQLite creates the database), anything else must start with a SQLite header and be at least
// as long as that header says. SQLite alone would create a new database over nothing, call a
// foreign file "not a database" only at the first query, and take a file cut short as valid
// until a query reaches a missing page.
func checkFile(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("stat %s: %w", path, err)
	}
	if fi.IsDir() {
		return &DamagedError{Path: path, Reason: "is a directory, not a database file"}
	}
	if fi.Size() == 0 {
		return nil
	}
	var h [headerSize]byte
	n, err := io.ReadFull(f, h[:])
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("read %s: %w", path, err)
	}
	return judgeHeader(path, h[:n], fi.Size())
}

// judgeHeader decides from the first bytes of a non-empty file and its size whether it is a
// whole SQLite database.
func judgeHeader(path string, h []byte, size int64) error {
	if len(h) < len(sqliteMagic) || string(h[:len(sqliteMagic)]) != sqliteMagic {
		return &DamagedError{Path: path, Reason: fmt.Sprintf("is not a SQLite database (it starts with %s)", quotePrefix(h))}
	}
	if len(h) < headerSize {
		return &DamagedError{Path: path, Reason: fmt.Sprintf("is cut short: %d bytes, less than a SQLite header", size)}
	}
	pageSize := int64(binary.BigEndian.Uint16(h[16:18]))
	if pageSize == 1 {
		pageSize = 65536
	}
	pages := int64(binary.BigEndian.Uint32(h[28:32]))
	// The page count is valid only when the change counter matches "version-valid-for", as
	// SQLite itself decides (https://www.sqlite.org/fileformat.html#in_header_database_size).
	valid := pages > 0 && binary.BigEndian.Uint32(h[24:28]) == binary.BigEndian.Uint32(h[92:96])
	if valid && size < pages*pageSize {
		return &DamagedError{Path: path, Reason: fmt.Sprintf("is cut short: %d bytes, its header says %d pages of %d bytes (%d)",
			size, pages, pageSize, pages*pageSize)}
	}
	return nil
}

// quotePrefix shows the first bytes of a file, quoted, for an error message.
func quotePrefix(b []byte) string {
	if len(b) > 16 {
		b = b[:16]
	}
	return fmt.Sprintf("%q", b)
}

// asDamaged turns SQLite's "not a database" and "malformed" errors into a DamagedError.
func asDamaged(path string, err error) error {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return err
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_NOTADB:
		return &DamagedError{Path: path, Reason: "is not a SQLite database", Err: err}
	case sqlite3.SQLITE_CORRUPT:
		return &DamagedError{Path: path, Reason: "is damaged", Err: err}
	}
	return err
}

// sqliteDSN is the SQLite URI of the file at path with the driver parameters params. Characters that
// a URI gives a meaning to are escaped, so that any directory name works.
func sqliteDSN(path, params string) string {
	esc := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
	return "file:" + esc + "?" + params
}
