// Package launch plans the processes of a run on its nodes: how many per node, their ranks, the distributed-training variables (PyTorch, TensorFlow, MPI) and their GPUs. It does no I/O.
package launch
