// Package instance holds the pure decisions of compute instances: the instance's states, whether
// it is idle and for how long (from its jobs, SSH sessions, Jupyter kernels, CPU and GPU use),
// when its start/stop schedules fire (cron in a time zone), and what to do now, with the reason;
// time arrives as data and nothing here does I/O.
package instance
