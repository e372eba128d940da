// Package local runs jobs on the machine of the workspace server: one detached supervisor process per run.
package local
