// Package slurm holds the pure parts of Hangar's Slurm support: parsers of sbatch, squeue, scontrol,
// sacct and sinfo output, the judgement of a Slurm job's state as a Hangar run state, and the
// generated batch script and sbatch options. No I/O: internal/backend/slurm runs the commands.
package slurm
