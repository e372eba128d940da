// Package slurm runs jobs on attached Slurm clusters: each run is one batch job (sbatch) whose batch
// step becomes the run's supervisor on the first allocated node; status merges Slurm's view (squeue,
// scontrol, sacct) with the supervisor's result; cancel is scancel. Commands run on the server's
// machine or on a login host over SSH.
package slurm
