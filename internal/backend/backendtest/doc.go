// Package backendtest holds a fake backend.Backend for tests of the controller and the server.
package backendtest
