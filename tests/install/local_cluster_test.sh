#!/usr/bin/env bash
# ctest local_cluster: compose/local-cluster start/status/stop on scratch dirs.
set -euo pipefail
cluster=$1
work=$(mktemp -d "${TMPDIR:-/tmp}/local-cluster-test.XXXXXX")
cleanup() {
  local d
  for d in plain auth tls; do "$cluster" stop --dir "$work/$d" -q || true; done
  rm -rf "$work"
}
trap cleanup EXIT

# shellcheck source=checks.sh
source "$(dirname "$0")/checks.sh"
matches() { [[ $1 =~ $2 ]]; }
pid_gone() { [[ ! -e /proc/$1 ]] || grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }
answers() { [[ $(redis-cli -h 127.0.0.1 -p "$1" ping 2>/dev/null) == PONG ]]; }

urls=$("$cluster" start -n 3 --dir "$work/plain" -q)
echo "started: $urls"
IFS=, read -r -a list <<<"$urls"
check "three URLs on one line" test "${#list[@]}" -eq 3
check "DIR/nodes holds the same line" test "$(cat "$work/plain/nodes")" = "$urls"
ports=()
for url in "${list[@]}"; do
  check "URL form redis://127.0.0.1:PORT ($url)" matches "$url" '^redis://127\.0\.0\.1:[0-9]+$'
  ports+=("${url##*:}")
done
for port in "${ports[@]}"; do check "node on $port answers PING" answers "$port"; done
pids=$(cat "$work"/plain/node-*/pid)
check "status reports all up" "$cluster" status --dir "$work/plain"
check "a second start reuses the live cluster" test "$("$cluster" start -n 3 --dir "$work/plain" -q)" = "$urls"
check "and starts no new process" test "$(cat "$work"/plain/node-*/pid)" = "$pids"

kill -STOP "${pids%%$'\n'*}"  # stop must also end a SIGSTOPped node
"$cluster" stop --dir "$work/plain" -q
for pid in $pids; do check "pid $pid is gone after stop" pid_gone "$pid"; done
for port in "${ports[@]}"; do check "nothing answers on $port after stop" bash -c "! redis-cli -p $port ping >/dev/null 2>&1"; done
check "status reports down" bash -c "! '$cluster' status --dir '$work/plain' >/dev/null"

# Credentials end up in the URL (percent-encoded) and are enforced; --aof turns on
# appendfsync always.
url=$("$cluster" start -n 1 --dir "$work/auth" --aof --user 'alice:s3 cr@t' -q)
check "credentials in the URL ($url)" matches "$url" '^redis://alice:s3%20cr%40t@127\.0\.0\.1:[0-9]+$'
port=${url##*:}
check "the default user is refused" bash -c "redis-cli -p $port ping 2>&1 | grep -q NOAUTH"
check "the ACL user is accepted" test "$(REDISCLI_AUTH='s3 cr@t' redis-cli -p "$port" --user alice ping)" = PONG
check "appendfsync always" test "$(REDISCLI_AUTH='s3 cr@t' redis-cli -p "$port" --user alice config get appendfsync | tail -n 1)" = always
pid=$(cat "$work/auth/node-1/pid")
"$cluster" stop --dir "$work/auth" -q
check "the authenticated node is gone after stop" pid_gone "$pid"

# --tls: a TLS-only node, verifiable with the CA that start made.
url=$("$cluster" start -n 1 --dir "$work/tls" --tls -q)
check "rediss:// URL ($url)" matches "$url" '^rediss://127\.0\.0\.1:[0-9]+$'
port=${url##*:}
check "TLS PING verified against DIR/tls/ca.crt" \
  test "$(redis-cli --tls --cacert "$work/tls/tls/ca.crt" -h localhost -p "$port" ping)" = PONG
check "the client certificate is accepted" test "$(redis-cli --tls --cacert "$work/tls/tls/ca.crt" \
  --cert "$work/tls/tls/client.crt" --key "$work/tls/tls/client.key" -p "$port" ping)" = PONG
check "no plain-text service on the TLS port" bash -c "! redis-cli -p $port ping >/dev/null 2>&1"
pid=$(cat "$work/tls/node-1/pid")
"$cluster" stop --dir "$work/tls" -q
check "the TLS node is gone after stop" pid_gone "$pid"

echo "local_cluster: $checks passed, 0 failed"
