"""torch.distributed all-reduce check: every rank adds rank+1, and checks the sum.

Hangar starts one process per rank with MASTER_ADDR, MASTER_PORT, WORLD_SIZE, RANK, LOCAL_RANK,
NODE_RANK and LOCAL_WORLD_SIZE set, so init_method="env://" is all the script needs. Uses the gloo
backend (CPU); Debian's python3-torch provides torch. FAIL_RANK=<n> makes rank n exit 1 (to see
the other ranks stopped), SHOW_GPUS=1 prints CUDA_VISIBLE_DEVICES.
"""
import datetime
import os
import sys
import time

import torch
import torch.distributed as dist

rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
if os.environ.get("SHOW_GPUS"):
    print(f"rank {rank} CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES', '')}", flush=True)
dist.init_process_group("gloo", init_method="env://", timeout=datetime.timedelta(seconds=60))
t = torch.tensor([float(rank + 1)])
dist.all_reduce(t, op=dist.ReduceOp.SUM)
want = world * (world + 1) / 2
print(f"rank {rank}/{world} local {os.environ['LOCAL_RANK']} node {os.environ['NODE_RANK']} "
      f"master {os.environ['MASTER_ADDR']}:{os.environ['MASTER_PORT']} sum {t.item():g} want {want:g}", flush=True)
if t.item() != want:
    sys.exit(2)
if os.environ.get("FAIL_RANK") == str(rank):
    print(f"rank {rank} fails on purpose", flush=True)
    sys.exit(1)
if os.environ.get("FAIL_RANK"):
    time.sleep(120)  # the failing rank makes Hangar stop this one
dist.destroy_process_group()
