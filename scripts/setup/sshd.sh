#!/usr/bin/env bash
# Installs Debian's OpenSSH server when it is missing and runs a private sshd for tests, idempotently.
# Everything it writes lives in the scratch directory given with --dir; /etc/ssh is never edited
# (installing the package does create /etc/ssh with its defaults, as any install would).
# Safe to run again and again: an installed package, existing keys and a running sshd are kept.
set -euo pipefail

usage() {
  cat <<'EOF'
Usage: sshd.sh [--install] [--dir DIR [--port N] [--start|--print|--stop]]

  --install     install openssh-server (apt-get) when /usr/sbin/sshd is missing; needs root on Debian
  --dir DIR     scratch directory for host keys, a client key, authorized_keys, sshd_config, pid and log
  --port N      port for sshd on 127.0.0.1 (default 2222)
  --start       start sshd with DIR/sshd_config (nothing happens when it already runs)
  --print       print the commands that start it instead
  --stop        stop the sshd started from DIR
  -h, --help    this help

With --dir, the script writes DIR/hostkey (ed25519), DIR/client_key(.pub), DIR/authorized_keys and
DIR/sshd_config (127.0.0.1:PORT, key login for the current user, root allowed with keys only,
PAM off, TCP forwarding on, internal-sftp). Existing keys are kept.
With CI set, a missing dependency is an error rather than a notice.

Examples:
  bash scripts/setup/sshd.sh --install
  bash scripts/setup/sshd.sh --install --dir /tmp/hangar-sshd --port 2222 --start
  ssh -i /tmp/hangar-sshd/client_key -o UserKnownHostsFile=/tmp/hangar-sshd/known_hosts -p 2222 root@127.0.0.1 id
  bash scripts/setup/sshd.sh --dir /tmp/hangar-sshd --stop
EOF
}

install=0 dir="" port=2222 action=""
while (($#)); do
  case $1 in
    --install) install=1 ;;
    --dir) dir=${2:?--dir needs a directory}; shift ;;
    --port) port=${2:?--port needs a number}; shift ;;
    --start | --print | --stop) action=${1#--} ;;
    -h | --help) usage; exit 0 ;;
    *) echo "sshd.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
if [[ $install == 0 && -z $dir ]]; then usage >&2; exit 2; fi
if [[ -n $action && -z $dir ]]; then echo "sshd.sh: --$action needs --dir" >&2; exit 2; fi
[[ $port =~ ^[0-9]+$ ]] || { echo "sshd.sh: --port $port is not a number" >&2; exit 2; }

fail() { # a missing dependency: fatal under CI or when asked to start, a notice otherwise
  echo "sshd.sh: $*" >&2
  if [[ -n ${CI:-} || $action == start ]]; then exit 1; fi
  exit 0
}

SSHD=/usr/sbin/sshd
if [[ $install == 1 && ! -x $SSHD ]]; then
  if [[ $(id -u) != 0 ]] || ! command -v apt-get >/dev/null; then
    fail "openssh-server is missing; install it as root on Debian (apt-get install -y openssh-server)"
  fi
  # policy-rc.d (exit 101) keeps apt from starting the system sshd; there is no systemd either.
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssh-server >/dev/null
  echo "sshd.sh: installed $($SSHD -V 2>&1 | head -1 || true)"
fi
[[ -z $dir ]] && exit 0
[[ -x $SSHD ]] || fail "$SSHD is missing (run with --install)"
command -v ssh-keygen >/dev/null || fail "ssh-keygen is missing (apt-get install -y openssh-client)"

mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
cfg=$dir/sshd_config pid=$dir/sshd.pid log=$dir/sshd.log

[[ -f $dir/hostkey ]] || ssh-keygen -q -t ed25519 -N '' -C hangar-test-host -f "$dir/hostkey"
[[ -f $dir/client_key ]] || ssh-keygen -q -t ed25519 -N '' -C hangar-test-client -f "$dir/client_key"
cp "$dir/client_key.pub" "$dir/authorized_keys"
chmod 600 "$dir/authorized_keys" "$dir/hostkey" "$dir/client_key"
echo "[127.0.0.1]:$port $(cut -d' ' -f1,2 "$dir/hostkey.pub")" >"$dir/known_hosts"

cat >"$cfg" <<EOF
# written by scripts/setup/sshd.sh; the system's /etc/ssh/sshd_config is not read
Port $port
ListenAddress 127.0.0.1
HostKey $dir/hostkey
PidFile $pid
AuthorizedKeysFile $dir/authorized_keys
# the keys live in a scratch directory that may be under a world-writable /tmp
StrictModes no
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
PermitRootLogin prohibit-password
AllowTcpForwarding yes
ClientAliveInterval 5
ClientAliveCountMax 3
Subsystem sftp internal-sftp
EOF

running() { [[ -s $pid ]] && kill -0 "$(cat "$pid")" 2>/dev/null; }
start_cmds="mkdir -p /run/sshd && $SSHD -t -f $cfg && $SSHD -f $cfg -E $log"

case $action in
  print)
    echo "$start_cmds"
    echo "ssh -i $dir/client_key -o UserKnownHostsFile=$dir/known_hosts -p $port $(id -un)@127.0.0.1 id"
    ;;
  start)
    if running; then
      echo "sshd.sh: sshd already running (pid $(cat "$pid")) on 127.0.0.1:$port"
      exit 0
    fi
    [[ $(id -u) == 0 ]] || echo "sshd.sh: not root: only $(id -un) can log in, and only with the key" >&2
    mkdir -p /run/sshd 2>/dev/null || true
    $SSHD -t -f "$cfg"
    $SSHD -f "$cfg" -E "$log"
    for _ in $(seq 50); do running && break; sleep 0.1; done
    running || { echo "sshd.sh: sshd did not start; see $log" >&2; exit 1; }
    echo "sshd.sh: sshd running (pid $(cat "$pid")) on 127.0.0.1:$port; key $dir/client_key"
    ;;
  stop)
    if running; then p=$(cat "$pid"); kill "$p" && echo "sshd.sh: stopped sshd (pid $p)"; fi
    rm -f "$pid"
    ;;
  "") echo "sshd.sh: config in $cfg (use --start or --print)" ;;
esac
