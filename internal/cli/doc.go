// Package cli is the hangar command line: commands, flags, help, output formats and exit codes; it talks to the workspace only through the api client.
package cli
