// Package backendtest is what every backend is tested with: the conformance suite (Run) that
// local, ssh, slurm and cluster run against their real engines, the workspace their supervisors
// report to in that suite (Workspace), and a fake backend.Backend for tests of the controller and
// the server (Fake).
package backendtest
