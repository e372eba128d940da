// Package secrets encrypts secrets at rest (SSH keys, passwords, workspace secrets for jobs) with
// a workspace key that Box rotates, and redacts them for printing.
package secrets
