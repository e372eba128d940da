// Package connection holds workspace connections (az ml connection): a named external source a
// data import reads, its target and its credentials (sealed at rest, never shown), and the
// rules of the two kinds Hangar reads: an S3 bucket (a file_system source) and a PostgreSQL
// database (a database source). Pure: no I/O.
package connection
