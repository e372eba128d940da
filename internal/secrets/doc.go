// Package secrets encrypts secrets at rest (SSH keys, passwords) with a workspace key, and redacts
// them for printing.
package secrets
