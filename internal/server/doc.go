// Package server is the workspace server's HTTP API: routes, authentication and the mapping of typed errors to status codes.
package server
