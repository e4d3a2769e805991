#!/usr/bin/env bash
# ctest local_cluster_topologies: compose/local-cluster --sentinel and --cluster start
# members the redlock CLI takes a lock on, and stop leaves none of their processes.
set -euo pipefail
cluster=$1
redlock=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/local-cluster-topologies.XXXXXX")
cleanup() {
  local d
  for d in sentinel cluster; do "$cluster" stop --dir "$work/$d" -q || true; done
  rm -rf "$work"
}
trap cleanup EXIT

# shellcheck source=checks.sh
source "$(dirname "$0")/checks.sh"
matches() { [[ $1 =~ $2 ]]; }
pid_gone() { [[ ! -e /proc/$1 ]] || grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }
role_of() { redis-cli -p "$1" role 2>/dev/null | head -n 1; }

# Takes and releases a lock on every member of DIR through the CLI; the lock's key is
# then on each member's master (or slot owner).
# Further arguments are flags for every call (a Sentinel fleet's remedy for two masters).
lock_round_trip() { # dir key [flag...]
  local nodes json value dir=$1 key=$2
  shift 2
  nodes=$(cat "$dir/nodes")
  json=$("$redlock" --nodes "$nodes" --no-guard-young-members "$@" acquire --json "$key") ||
    return 1
  value=$(sed -n 's/.*"value":"\([0-9a-f]*\)".*/\1/p' <<<"$json")
  [[ -n $value ]] || return 1
  "$redlock" --nodes "$nodes" "$@" release "$key" "$value" >/dev/null
}

# Every pid DIR recorded is gone after stop --purge, and so is DIR.
stops_cleanly() { # dir
  local d=$1 pids pid
  pids=$(cat "$d"/node-*/pid)
  "$cluster" stop --purge --dir "$d" -q
  for pid in $pids; do pid_gone "$pid" || { echo "pid $pid still runs" >&2; return 1; }; done
  [[ ! -e $d ]]
}

# --- two Sentinel groups: a master, two replicas and three sentinels each ------------
urls=$("$cluster" start --sentinel -n 2 --dir "$work/sentinel" -q)
echo "sentinel: $urls"
sentinel_url='redis-sentinel://127\.0\.0\.1:[0-9]+,127\.0\.0\.1:[0-9]+,127\.0\.0\.1:[0-9]+/redlock-'
check "two Sentinel URLs ($urls)" matches "$urls" "^${sentinel_url}1,${sentinel_url}2\$"
check "twelve processes recorded" test "$(cat "$work"/sentinel/node-*/pid | wc -l)" -eq 12
check "status: all up" bash -c "'$cluster' status --dir '$work/sentinel' >/dev/null"
check "node-1 is the master" test "$(role_of "$(cat "$work/sentinel/node-1/port")")" = master
check "node-2 is a replica" test "$(role_of "$(cat "$work/sentinel/node-2/port")")" = slave
check "node-3 is a replica" test "$(role_of "$(cat "$work/sentinel/node-3/port")")" = slave
sentinel_port=$(cat "$work/sentinel/node-4/port")
check "a sentinel names node-1 as the master of redlock-1" test \
  "$(redis-cli -p "$sentinel_port" sentinel get-master-addr-by-name redlock-1 | tail -n 1)" = \
  "$(cat "$work/sentinel/node-1/port")"
# Each group has two replicas, and every grant waits for both (--replicas-to-ack 2): a
# group with two masters then has one whose grants do not count (docs/safety.md).
check "lock taken and released on the Sentinel members" lock_round_trip "$work/sentinel" topo:sentinel \
  --replicas-to-ack 2
check "stop --purge ends every process" stops_cleanly "$work/sentinel"

# --- two clusters of three shards -------------------------------------------------------
urls=$("$cluster" start --cluster -n 2 --dir "$work/cluster" -q)
echo "cluster: $urls"
cluster_url='redis-cluster://127\.0\.0\.1:[0-9]+,127\.0\.0\.1:[0-9]+,127\.0\.0\.1:[0-9]+'
check "two cluster URLs ($urls)" matches "$urls" "^${cluster_url},${cluster_url}\$"
check "six processes recorded" test "$(cat "$work"/cluster/node-*/pid | wc -l)" -eq 6
for i in 1 2 3 4 5 6; do
  port=$(cat "$work/cluster/node-$i/port")
  check "shard $i: cluster_state:ok, three nodes" test \
    "$(redis-cli -p "$port" cluster info | tr -d '\r' | grep -cE '^(cluster_state:ok|cluster_known_nodes:3)$')" = 2
done
check "the two clusters are apart" bash -c "! redis-cli -p $(cat "$work/cluster/node-1/port") cluster nodes |
  grep -q ':$(cat "$work/cluster/node-4/port")@'"
check "lock taken and released on the cluster members" lock_round_trip "$work/cluster" topo:cluster
check "stop --purge ends every process" stops_cleanly "$work/cluster"

check "--sentinel with --cluster is a usage error" bash -c "! '$cluster' start --sentinel --cluster --dir '$work/x' -q 2>/dev/null"
check "--cluster with --password is a usage error" bash -c "! '$cluster' start --cluster --password pw --dir '$work/x' -q 2>/dev/null"
echo "local_cluster_topologies: $checks passed, 0 failed"
