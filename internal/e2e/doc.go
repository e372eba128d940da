// Package e2e holds end-to-end tests that build the real hangar binary and drive the real server, CLI and supervisors.
package e2e
