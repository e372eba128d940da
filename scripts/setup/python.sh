#!/usr/bin/env bash
# Debian's Python ML packages for the distributed-training, parallel-job and curated-environment tests,
# idempotently: torch (gloo on CPU), Open MPI and mpi4py, scikit-learn. They live under /usr/bin/python3 (not the python3 first on PATH).
set -euo pipefail
missing=()
/usr/bin/python3 -c 'import torch' 2>/dev/null || missing+=(python3-torch)
/usr/bin/python3 -c 'import numpy' 2>/dev/null || missing+=(python3-numpy)  # the scoring server's test runs Azure's score.py
/usr/bin/python3 -c 'import mpi4py' 2>/dev/null || missing+=(python3-mpi4py)
/usr/bin/python3 -c 'import pandas' 2>/dev/null || missing+=(python3-pandas)  # parallel jobs hand an mltable's rows to run() as DataFrames
/usr/bin/python3 -c 'import sklearn' 2>/dev/null || missing+=(python3-sklearn)  # the default mapping of Azure's curated sklearn environments
/usr/bin/python3 -c 'import yaml' 2>/dev/null || missing+=(python3-yaml)  # the built-in MLflow scorer reads a model's MLmodel
command -v mpirun >/dev/null || missing+=(openmpi-bin)
command -v jupyter-notebook >/dev/null || missing+=(jupyter-notebook)  # compute instances' Jupyter (Notebook 6; Debian 12 has no JupyterLab)
if ((${#missing[@]})); then
  if [[ $(id -u) != 0 ]]; then echo "python.sh: need root to install ${missing[*]}" >&2; exit 1; fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
/usr/bin/python3 -c 'import torch, mpi4py; print("python packages: torch", torch.__version__, "mpi4py", mpi4py.__version__)'
