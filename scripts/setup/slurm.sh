#!/usr/bin/env bash
# Runs a private two-node Slurm cluster on this machine for the Slurm tests, idempotently:
# installs Debian's slurm-wlm and munge when missing, starts munged (no systemd: by hand, as the
# munge user), writes slurm.conf into a scratch directory, starts slurmctld and two slurmd
# (hangar-n1, hangar-n2: distinct NodeName and Port on loopback, NodeHostname = this host), waits
# until both nodes are idle and prints the SLURM_CONF path on its last line.
# Nothing under /etc is edited (installing the packages does create /etc/slurm and
# /etc/munge/munge.key, as any install would). Running it again keeps what already runs; a
# changed config restarts the daemons.
#
# Partitions: debug (default; both nodes) and one_node (MaxNodes=1: a 2-node job stays PENDING
# with reason PartitionNodeLimit, which the tests use for "why pending"). KillWait=5 keeps
# cancels and time limits quick; MinJobAge=600 keeps ended jobs in `scontrol show job`.
#
# Usage: slurm.sh [STATE_DIR]        (default $HANGAR_TEST_STATE/slurm, else /var/tmp/hangar-test/slurm)
#        slurm.sh --stop [STATE_DIR] stop the daemons started from STATE_DIR
# Environment: SLURM_CTLD_PORT (default 6917), SLURM_NODE_PORT0 (default 17010: nodes use +1, +2).
# A missing dependency (packages, root) is an error with CI set; without CI it prints why and exits 0
# with nothing on stdout, so the Slurm tests skip.
set -euo pipefail

stop=0
if [[ ${1:-} == --stop ]]; then stop=1; shift; fi
if [[ ${1:-} == -h || ${1:-} == --help ]]; then sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0; fi
state=${1:-${HANGAR_TEST_STATE:-/var/tmp/hangar-test}/slurm}
ctld_port=${SLURM_CTLD_PORT:-6917}
port0=${SLURM_NODE_PORT0:-17010}
nodes=(hangar-n1 hangar-n2)

say() { echo "slurm.sh: $*" >&2; }
die() { say "$*"; exit 1; }
missing() { # a missing dependency: fatal under CI, a notice otherwise
  say "$*"
  if [[ -n ${CI:-} ]]; then exit 1; fi
  say "(CI is not set: the Slurm tests will skip)"
  exit 0
}

mkdir -p "$state"
state=$(cd "$state" && pwd)
conf=$state/slurm.conf

pid_alive() { [[ -s $1 ]] && kill -0 "$(cat "$1")" 2>/dev/null; }
stop_daemons() {
  local f p
  for f in "$state"/slurmd-*.pid "$state"/slurmctld.pid; do
    [[ -e $f ]] || continue
    if pid_alive "$f"; then
      p=$(cat "$f")
      kill "$p" 2>/dev/null || true
      for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
      kill -9 "$p" 2>/dev/null || true
    fi
    rm -f "$f"
  done
}
if ((stop)); then stop_daemons; say "stopped the daemons of $state"; exit 0; fi

# 1. Packages.
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v munged >/dev/null; then
  [[ $(id -u) == 0 ]] || missing "slurm-wlm and munge are missing; install them as root (apt-get install -y slurm-wlm munge)"
  command -v apt-get >/dev/null || missing "slurm-wlm and munge are missing and there is no apt-get"
  say "installing slurm-wlm munge"
  apt-get update -qq
  # policy-rc.d keeps apt from starting daemons; there is no systemd either.
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge >/dev/null
fi
command -v sbatch >/dev/null || die "sbatch is missing after the install"
[[ $(id -u) == 0 ]] || missing "the test cluster's daemons run as root (SlurmUser=root); run this as root"

# 2. munge (the Debian postinst wrote /etc/munge/munge.key).
[[ -s /etc/munge/munge.key ]] || die "/etc/munge/munge.key is missing (reinstall munge)"
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
  mkdir -p /run/munge && chown munge:munge /run/munge && chmod 755 /run/munge
  runuser -u munge -- /usr/sbin/munged
  for _ in $(seq 50); do munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.1; done
  munge -n | unmunge >/dev/null || die "munged does not answer"
fi

# 3. The configuration, in the scratch directory.
host=$(hostname)
mkdir -p "$state/state" "$state/log"
for n in "${nodes[@]}"; do mkdir -p "$state/spool/$n"; done
cat >"$conf.tmp" <<EOF
# written by scripts/setup/slurm.sh for Hangar's tests
ClusterName=hangar
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$ctld_port
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=$state/state
SlurmdSpoolDir=$state/spool/%n
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd-%n.pid
SlurmctldLogFile=$state/log/slurmctld.log
SlurmdLogFile=$state/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=500
SchedulerType=sched/backfill
# Schedule batch jobs at once rather than in batches every 3 s (the default batch_sched_delay): tests and
# benchmarks wait on it.
SchedulerParameters=batch_sched_delay=0
ReturnToService=2
MinJobAge=600
KillWait=5
JobCompType=jobcomp/filetxt
JobCompLoc=$state/log/jobcomp.txt
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
MpiDefault=none
NodeName=hangar-n1 NodeHostname=$host NodeAddr=127.0.0.1 Port=$((port0 + 1)) CPUs=2 RealMemory=4000 State=UNKNOWN
NodeName=hangar-n2 NodeHostname=$host NodeAddr=127.0.0.1 Port=$((port0 + 2)) CPUs=2 RealMemory=4000 State=UNKNOWN
PartitionName=debug Nodes=hangar-n[1-2] Default=YES MaxTime=INFINITE State=UP
PartitionName=one_node Nodes=hangar-n[1-2] MaxNodes=1 MaxTime=INFINITE State=UP
EOF
changed=1
if [[ -f $conf ]] && cmp -s "$conf" "$conf.tmp"; then changed=0; fi
mv "$conf.tmp" "$conf"
export SLURM_CONF=$conf

# 4. The daemons: restart all when the config changed, else start what is not running.
if ((changed)); then stop_daemons; fi
if ! pid_alive "$state/slurmctld.pid"; then
  slurmctld -f "$conf" || die "slurmctld did not start; see $state/log/slurmctld.log"
fi
for _ in $(seq 100); do scontrol ping 2>/dev/null | grep -q UP && break; sleep 0.1; done
scontrol ping | grep -q UP || die "slurmctld does not answer; see $state/log/slurmctld.log"
for n in "${nodes[@]}"; do
  pid_alive "$state/slurmd-$n.pid" || slurmd -f "$conf" -N "$n" || die "slurmd $n did not start; see $state/log/slurmd-$n.log"
done

# 5. Wait until both nodes are idle (or busy with earlier jobs), bringing back a node left DOWN.
ready() {
  local states
  states=$(sinfo -h -N -p debug -o '%T' 2>/dev/null | sort -u)
  [[ -n $states ]] && ! grep -qvE '^(idle|mixed|allocated|completing)$' <<<"$states"
}
for i in $(seq 100); do
  ready && break
  if ((i % 20 == 0)); then scontrol update NodeName=hangar-n[1-2] State=RESUME 2>/dev/null || true; fi
  sleep 0.1
done
ready || die "nodes not idle: $(sinfo -h -N -o '%N %T' | tr '\n' ' '); see $state/log"
say "two nodes up ($(sinfo -h -N -p debug -o '%N:%T' | sort -u | tr '\n' ' '))"
echo "$conf"
