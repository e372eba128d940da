// Package instances holds compute instances' lives (design 0018): the user's verbs (start,
// stop, restart, show), what the cluster backend asks (an instance as a one-node pool, whether
// it admits a job) and the agents' dispatcher (activity reports, the services a running
// instance's agent keeps: Jupyter and SSH), and the instance loop that moves the states on
// (nodes coming and going, setup scripts, schedules, idle shutdown through instance.Decide).
// Its dependencies are the small interfaces in manager.go: what it asks of the run core (Runs)
// and of the store (Store).
package instances
