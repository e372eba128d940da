// Package parallel turns a `type: parallel` job (Azure's parallelJob) into a command job that
// runs Hangar's parallel driver, a Python standard-library program embedded in the binary that
// the supervisor writes beside the run: it splits the input's files into mini-batches and calls
// the entry script's run() on them in worker processes (see driver.py).
package parallel
