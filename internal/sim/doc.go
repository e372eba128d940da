// Package sim replays a synthetic, seeded day of jobs through the real scheduler and autoscaler on a simulated clock and provider, and reports what each scaling policy costs and how long jobs wait.
package sim
