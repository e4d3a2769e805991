#!/usr/bin/env bash
# bench_smoke: redlock-bench runs for about a second against five fresh local nodes
# and prints one redlock-bench/v1 line with completed cycles. Not a timing test: any
# cycles/s above zero passes.
#
#   smoke_test.sh path/to/redlock-bench path/to/compose/local-cluster
set -euo pipefail
bench=$1
cluster=$2
dir=$(mktemp -d "${TMPDIR:-/tmp}/redlock-bench-smoke.XXXXXX")
cleanup() { "$cluster" stop --dir "$dir" --purge -q >/dev/null 2>&1 || true; rm -rf "$dir"; }
trap cleanup EXIT

nodes=$("$cluster" start -n 5 --dir "$dir" -q)
for driver in threads async; do
  line=$("$bench" --nodes "$nodes" --driver "$driver" --workers 4 --duration 1 --warmup 0.2)
  echo "$line"
  python3 - "$line" <<'PY'
import json, sys
run = json.loads(sys.argv[1])
assert run["schema"] == "redlock-bench/v1", run["schema"]
# Only that cycles complete: a loaded machine may legitimately fail some attempts.
assert run["cycles"] > 0, ("no cycle completed", run["error_kinds"])
assert run["acquire_ms"]["n"] == run["cycles"]
# Both drivers await the release, so every cycle has its release timed.
assert run["release_ms"]["n"] == run["cycles"], run["release_ms"]
print("ok:", run["lib"], run["cycles"], "cycles")
PY
done
