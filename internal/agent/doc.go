// Package agent is `hangar agent`, a managed cluster's node: it joins with a join token, reports what it offers, heartbeats, starts a supervisor for each run it is assigned and keeps them running while the server is away.
package agent
