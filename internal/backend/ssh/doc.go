// Package ssh runs jobs on attached machines over SSH: it installs hangar on the host once, sends the snapshot files the host lacks, starts a detached supervisor that reaches the server through a reverse tunnel, and reads the run's state back.
package ssh
