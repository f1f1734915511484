#!/usr/bin/env bash
# Starts a throwaway PostgreSQL primary and a streaming replica of it, for
# the read replicas' tests. Source it (". .ci/replica.sh") as root: the
# clusters run as the postgres user, in a temporary directory, on free
# ports; the machine's own cluster is not touched. It exports
#
#   PREDICTKIT_TEST_PRIMARY_URL  the primary's database
#   PREDICTKIT_TEST_REPLICA_URL  the same database on the replica
#
# and defines predictkit_replica_stop, which stops both clusters and
# removes the directory (call it at exit). Run directly, it prints the
# two URLs and leaves the clusters running until you press Enter.

predictkit_replica_start() {
  local bin dir p1 p2 i
  bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
  if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
    echo "replica: no PostgreSQL server binaries in /usr/lib/postgresql/*/bin" >&2
    return 1
  fi
  dir=$(mktemp -d /tmp/predictkit-replica.XXXXXX) || return 1
  PREDICTKIT_REPLICA_DIR=$dir PREDICTKIT_REPLICA_BIN=$bin
  chown postgres: "$dir" && chmod 700 "$dir"
  p1=$(predictkit_free_port) && p2=$(predictkit_free_port "$p1") || return 1

  runuser -u postgres -- "$bin/initdb" -D "$dir/primary" -U postgres --auth=trust -E UTF8 >"$dir/initdb.log" 2>&1 ||
    { cat "$dir/initdb.log" >&2; return 1; }
  cat >>"$dir/primary/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $p1
unix_socket_directories = '$dir'
wal_level = replica
max_wal_senders = 5
hot_standby = on
fsync = off
CONF
  echo "host replication postgres 127.0.0.1/32 trust" >>"$dir/primary/pg_hba.conf"
  runuser -u postgres -- "$bin/pg_ctl" -D "$dir/primary" -l "$dir/primary.log" -w -t 60 start >/dev/null ||
    { cat "$dir/primary.log" >&2; return 1; }

  runuser -u postgres -- "$bin/pg_basebackup" -h 127.0.0.1 -p "$p1" -U postgres -D "$dir/replica" -R -X stream ||
    return 1
  echo "port = $p2" >>"$dir/replica/postgresql.conf"
  runuser -u postgres -- "$bin/pg_ctl" -D "$dir/replica" -l "$dir/replica.log" -w -t 60 start >/dev/null ||
    { cat "$dir/replica.log" >&2; return 1; }

  for i in $(seq 1 60); do
    [ "$(runuser -u postgres -- "$bin/psql" -h 127.0.0.1 -p "$p1" -U postgres -d postgres -Atc \
      "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'")" = 1 ] && break
    [ "$i" = 60 ] && { echo "replica: not streaming after 30 s" >&2; cat "$dir/replica.log" >&2; return 1; }
    sleep 0.5
  done
  runuser -u postgres -- "$bin/psql" -h 127.0.0.1 -p "$p1" -U postgres -d postgres -qc "CREATE DATABASE predictkit" || return 1
  export PREDICTKIT_TEST_PRIMARY_URL="postgres://postgres@127.0.0.1:$p1/predictkit?sslmode=disable"
  export PREDICTKIT_TEST_REPLICA_URL="postgres://postgres@127.0.0.1:$p2/predictkit?sslmode=disable"
  # The database reaches the replica with the next WAL it replays.
  for i in $(seq 1 60); do
    runuser -u postgres -- "$bin/psql" -h 127.0.0.1 -p "$p2" -U postgres -d predictkit -qAtc "SELECT 1" >/dev/null 2>&1 && return 0
    sleep 0.5
  done
  echo "replica: the database did not reach the replica" >&2
  return 1
}

# predictkit_free_port prints a TCP port of 127.0.0.1 nobody listens on,
# other than its argument.
predictkit_free_port() {
  local p
  for p in $(shuf -i 20000-39999 -n 100); do
    [ "$p" = "${1:-}" ] && continue
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
      echo "$p"
      return 0
    fi
  done
  echo "replica: no free port" >&2
  return 1
}

predictkit_replica_stop() {
  local dir=${PREDICTKIT_REPLICA_DIR:-} bin=${PREDICTKIT_REPLICA_BIN:-}
  [ -n "$dir" ] && [ -d "$dir" ] || return 0
  for c in replica primary; do
    [ -f "$dir/$c/postmaster.pid" ] &&
      runuser -u postgres -- "$bin/pg_ctl" -D "$dir/$c" -m immediate -w stop >/dev/null 2>&1
  done
  rm -rf "$dir"
  PREDICTKIT_REPLICA_DIR=
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  trap predictkit_replica_stop EXIT
  predictkit_replica_start
  echo "PREDICTKIT_TEST_PRIMARY_URL=$PREDICTKIT_TEST_PRIMARY_URL"
  echo "PREDICTKIT_TEST_REPLICA_URL=$PREDICTKIT_TEST_REPLICA_URL"
  read -r -p "the clusters run until you press Enter "
else
  predictkit_replica_start || { predictkit_replica_stop; return 1; }
fi
