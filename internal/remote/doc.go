// Package remote runs commands and moves files on a host, through one small interface with a local
// (os/exec) and an SSH implementation, plus what a backend does on a host built on it: content-addressed
// binaries and blobs, detached processes, node detection, and a reconnecting SSH client with reverse
// port forwards.
package remote
