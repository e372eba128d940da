#!/usr/bin/env bash
# Runs a private PostgreSQL cluster on this machine for the store's PostgreSQL tests,
# idempotently: installs Debian's postgresql when its binaries are missing, creates a cluster
# (initdb) in a scratch directory owned by the postgres system user (PostgreSQL refuses to run as
# root), listening on 127.0.0.1 only on a fixed port and on a unix socket in that directory,
# starts it when it is not running, creates the test role (allowed to create databases: each
# test gets its own) and its database, and prints the role's connection URL on its last line.
# Nothing under /etc is edited. Running it again keeps what already runs.
#
# Usage: postgres.sh [STATE_DIR]        (default $HANGAR_TEST_STATE/pg, else /var/tmp/hangar-test/pg)
#        postgres.sh --stop [STATE_DIR] stop the server started from STATE_DIR
# Environment: HANGAR_PG_PORT (default 55432).
# A missing dependency (packages, root) is an error with CI set; without CI it prints why and exits 0
# with nothing on stdout, so the PostgreSQL store run is left out.
set -euo pipefail

stop=0
if [[ ${1:-} == --stop ]]; then stop=1; shift; fi
if [[ ${1:-} == -h || ${1:-} == --help ]]; then sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0; fi
state=${1:-${HANGAR_TEST_STATE:-/var/tmp/hangar-test}/pg}
port=${HANGAR_PG_PORT:-55432}
role=hangar_test
password=hangar_test # a cluster on loopback for tests only
database=hangar_test

say() { echo "postgres.sh: $*" >&2; }
die() { say "$*"; exit 1; }
missing() { # a missing dependency: fatal under CI, a notice otherwise
  say "$*"
  if [[ -n ${CI:-} ]]; then exit 1; fi
  say "(CI is not set: the PostgreSQL store tests will not run)"
  exit 0
}

[[ $port =~ ^[0-9]+$ ]] || die "HANGAR_PG_PORT must be a number, not $port"
[[ $(id -u) == 0 ]] || missing "the test cluster is created as the postgres user; run this as root"

pgbin() { # the newest installed server's bin directory
  local d
  d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
  [[ -n $d && -x $d/initdb && -x $d/pg_ctl ]] && echo "$d"
}

# 1. Packages.
if ! bin=$(pgbin); then
  command -v apt-get >/dev/null || missing "PostgreSQL is missing and there is no apt-get"
  say "installing postgresql"
  apt-get update -qq
  # policy-rc.d keeps apt from starting the Debian cluster; there is no systemd either.
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
  bin=$(pgbin) || die "initdb and pg_ctl are missing after installing postgresql"
fi
id postgres >/dev/null 2>&1 || die "the postgres system user is missing (reinstall postgresql)"
as_pg() { runuser -u postgres -- "$@"; }

data=$state/data
log=$state/postgres.log
ctl() { as_pg "$bin/pg_ctl" -D "$data" "$@"; }

if ((stop)); then
  if [[ -f $data/postmaster.pid ]]; then ctl stop -m fast -w >/dev/null; fi
  say "stopped the server of $state"
  exit 0
fi

# 2. The cluster, in the scratch directory.
mkdir -p "$state"
state=$(cd "$state" && pwd)
data=$state/data
log=$state/postgres.log
chown postgres:postgres "$state"
chmod 700 "$state"
if [[ ! -s $data/PG_VERSION ]]; then
  say "creating a cluster in $data"
  as_pg "$bin/initdb" -D "$data" -U postgres --auth-local=peer --auth-host=scram-sha-256 \
    -E UTF8 --locale=C.UTF-8 >"$state/initdb.log" 2>&1 || die "initdb failed: see $state/initdb.log"
fi
# Listen on loopback and on a socket in the state directory only; settings for a test bed
# (fsync stays on: the tests check durability as users get it).
conf="listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$state'
max_connections = 200
shared_buffers = 64MB
log_min_messages = warning"
if [[ ! -f $data/hangar.conf ]] || [[ $(cat "$data/hangar.conf") != "$conf" ]]; then
  printf '%s\n' "$conf" | as_pg tee "$data/hangar.conf" >/dev/null
  grep -q "^include_if_exists = 'hangar.conf'" "$data/postgresql.conf" ||
    echo "include_if_exists = 'hangar.conf'" | as_pg tee -a "$data/postgresql.conf" >/dev/null
  if [[ -f $data/postmaster.pid ]] && ctl status >/dev/null 2>&1; then
    say "the configuration changed: restarting"
    ctl restart -m fast -w -l "$log" >/dev/null || die "pg_ctl restart failed: see $log"
  fi
fi

# 3. The server.
if ! ctl status >/dev/null 2>&1; then
  say "starting the server on 127.0.0.1:$port"
  ctl start -w -t 60 -l "$log" >/dev/null || die "pg_ctl start failed: see $log"
fi
psql() { as_pg "$bin/psql" -h "$state" -p "$port" -U postgres -X -q -v ON_ERROR_STOP=1 "$@"; }
for _ in $(seq 50); do psql -d postgres -c 'SELECT 1' >/dev/null 2>&1 && break; sleep 0.2; done
psql -d postgres -c 'SELECT 1' >/dev/null || die "the server does not answer on $state (see $log)"

# 4. The test role (creates a database per test) and its own database.
psql -d postgres >/dev/null <<SQL || die "creating role $role failed"
SELECT 'CREATE ROLE $role LOGIN CREATEDB' WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '$role')
\gexec
ALTER ROLE $role WITH LOGIN CREATEDB PASSWORD '$password';
SQL
psql -d postgres >/dev/null <<SQL || die "creating database $database failed"
SELECT 'CREATE DATABASE $database OWNER $role' WHERE NOT EXISTS (SELECT 1 FROM pg_database WHERE datname = '$database')
\gexec
SQL

url="postgres://$role:$password@127.0.0.1:$port/$database?sslmode=disable"
say "PostgreSQL $("$bin/postgres" --version | awk '{print $3}') runs in $state"
echo "$url"
