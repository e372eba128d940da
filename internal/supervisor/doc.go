// Package supervisor runs beside the user's processes: it fetches the snapshot and inputs, starts the command, ships logs and metrics, enforces limits, collects outputs and reports the result.
package supervisor
