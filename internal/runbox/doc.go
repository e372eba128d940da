// Package runbox keeps a run's processes in a box on the node that runs them: a cgroup (and a
// marker in their environment) so that whoever notices the run's supervisor is gone can end every
// process the run left behind, and a mount sandbox (bubblewrap) that hides the workspace's secrets
// and the other runs from them. See docs/security.md for the trust model.
package runbox
