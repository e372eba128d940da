from mpi4py import MPI
import sys
comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
total = comm.allreduce(rank + 1, op=MPI.SUM)
want = size * (size + 1) // 2
print(f"mpi rank {rank}/{size} sum {total} want {want}", flush=True)
sys.exit(0 if total == want else 2)
