// Package api holds the JSON wire types of the workspace server and the Go client used by the CLI and the run supervisor.
package api
