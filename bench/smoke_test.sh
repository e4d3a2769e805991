#!/usr/bin/env bash
# bench_smoke: redlock-bench runs for about a second per workload (each driver, and each
# mode of the lock family) against five fresh local nodes and prints one
# redlock-bench/v1 line with completed cycles; so does redlock-fanout-limit, whose line
# must carry the fields bench/compare joins on. A run with --series and --fault-command
# has its windows and the fault's times, and a cluster member counts as one member. Not
# a timing test: any cycles/s above zero passes. redlock-memory-soak, given, prints a line
# per second with the process' resident memory while one node hangs.
#
#   smoke_test.sh path/to/redlock-bench path/to/compose/local-cluster \
#     [path/to/redlock-fanout-limit [path/to/redlock-memory-soak]]
set -euo pipefail
bench=$1
cluster=$2
limit=${3:-}
soak=${4:-}
dir=$(mktemp -d "${TMPDIR:-/tmp}/redlock-bench-smoke.XXXXXX")
# A JSON line goes to the checks as a file: with every node event of a loaded run in its
# series, one line can pass the 128 KiB the kernel allows a single argument.
as_file() {
  printf '%s\n' "$1" >"$dir/run.json"
  echo "$dir/run.json"
}
cleanup() {
  "$cluster" stop --dir "$dir/cluster" --purge -q >/dev/null 2>&1 || true
  "$cluster" stop --dir "$dir" --purge -q >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap cleanup EXIT

nodes=$("$cluster" start -n 5 --dir "$dir" -q)
# Each driver with the exclusive lock, then each primitive of the lock family (4 workers
# never contend for 4 permits).
runs=("--driver threads" "--driver threads --sync-calls hand_off" "--driver async --observer"
      "--mode shared" "--mode permits --permits 4" "--mode keys --keys 3 --driver async")
for flags in "${runs[@]}"; do
  # shellcheck disable=SC2086 # the flags are words on purpose
  line=$("$bench" --nodes "$nodes" $flags --workers 4 --duration 1 --warmup 0.2)
  echo "$line"
  python3 - "$(as_file "$line")" "$flags" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))
flags = sys.argv[2].split()
assert run["schema"] == "redlock-bench/v1", run["schema"]
mode = flags[flags.index("--mode") + 1] if "--mode" in flags else "distinct"
assert run["mode"] == mode, (run["mode"], mode)
assert run["permits"] == (4 if mode == "permits" else None), run["permits"]
assert run["keys_per_lock"] == (3 if mode == "keys" else 1), run["keys_per_lock"]
assert run["observer"] == ("--observer" in flags), run["observer"]
assert run["sync_calls"] == ("hand_off" if "hand_off" in flags else "lead"), run["sync_calls"]
# The semaphore's quorum for 4 permits on 5 nodes is all of them.
assert run["quorum"] == (5 if mode == "permits" else 3), run["quorum"]
# Only that cycles complete: a loaded machine may legitimately fail some attempts.
assert run["cycles"] > 0, ("no cycle completed", run["error_kinds"])
assert run["acquire_ms"]["n"] == run["cycles"]
# Both drivers await the release, so every cycle has its release timed.
assert run["release_ms"]["n"] == run["cycles"], run["release_ms"]
print("ok:", run["lib"], run["mode"], run["cycles"], "cycles")
PY
done

# --series and --fault-command: per-window counts of every member and the fault's times.
line=$("$bench" --nodes "$nodes" --workers 4 --duration 1 --warmup 0.2 --series 100 \
  --fault-at 0.3 --fault-command "touch $dir/fault-ran")
python3 - "$(as_file "$line")" "$dir/fault-ran" <<'PY'
import json, os, sys
run = json.load(open(sys.argv[1]))
series, fault = run["series"], run["fault"]
assert series["window_ms"] == 100, series["window_ms"]
assert 9 <= len(series["acquired"]) <= 10, len(series["acquired"])
assert sum(series["acquired"]) > 0 and len(series["failed"]) == len(series["acquired"]), series
assert len(series["members"]) == 5, series["members"]
for member in series["members"]:
    assert member["node"].startswith("redis://"), member["node"]
    assert len(member["granted"]) == len(series["acquired"]) and sum(member["granted"]) > 0, member
assert os.path.exists(sys.argv[2]), "the fault command did not run"
assert fault["exit_status"] == 0 and 290 <= fault["at_ms"] <= fault["done_ms"] < 1000, fault
print("ok: series of", len(series["acquired"]), "windows, fault at", round(fault["at_ms"]), "ms")
PY

# A cluster member: --nodes keeps the seed list of its URL together, and the servers'
# counters are null (a member is several servers).
"$cluster" start --cluster -n 1 --dir "$dir/cluster" -q >/dev/null
line=$("$bench" --nodes "$(cat "$dir/cluster/nodes"),$nodes" --workers 4 --duration 0.5 --warmup 0.2)
"$cluster" stop --purge --dir "$dir/cluster" -q
python3 - "$(as_file "$line")" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))
assert (run["nodes"], run["quorum"]) == (6, 4), (run["nodes"], run["quorum"])
assert run["cycles"] > 0, ("no cycle completed", run["error_kinds"])
assert run["redis_cpu_us_per_cycle"] is None and run["redis_commands_per_cycle"] is None, run
print("ok: a cluster member beside five servers,", run["cycles"], "cycles")
PY

if [[ -n $soak ]]; then
  "$soak" --nodes "$nodes" --threads 4 --pause 1 --duration 2 --every 1 --sync-calls hand_off \
    >"$dir/soak.jsonl"
  python3 - "$dir/soak.jsonl" <<'PY'
import json, sys
lines = [json.loads(line) for line in open(sys.argv[1])]
assert [line["t_s"] for line in lines] == [0, 1, 2], lines
assert all(line["rss_kb"] > 0 and line["paused"] == 1 for line in lines), lines
assert lines[0]["sync_calls"] == "hand_off", lines[0]
# One node of five stopped leaves a quorum: cycles complete.
assert lines[-1]["cycles"] > 0, lines[-1]
print("ok: memory soak,", lines[-1]["cycles"], "cycles,", lines[-1]["rss_kb"], "kB")
PY
fi

[[ -n $limit ]] || exit 0
line=$("$limit" --nodes "$nodes" --workers 4 --duration 0.5 --warmup 0.1 --label smoke --run 2)
echo "$line"
python3 - "$(as_file "$line")" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))
# The fields bench/compare and its charts read, with redlock-bench's names and types.
assert run["schema"] == "redlock-bench/v1", run["schema"]
assert run["bench"] == "redlock-fanout-limit", run["bench"]
assert (run["label"], run["run"], run["mode"]) == ("smoke", 2, "distinct"), run
assert (run["workers"], run["nodes"], run["quorum"]) == (4, 5, 3), run
assert run["cycles"] > 0 and run["cycles"] % 4 == 0, run["cycles"]
assert run["failures"] == 0 and run["granted_reply_ratio"] == 1.0, run
assert run["ops_per_s"] > 0 and run["elapsed_s"] > 0, run
for field in ("acquire_ms", "release_ms", "cycle_ms"):
    summary = run[field]
    assert set(summary) == {"n", "p50", "p90", "p99", "max", "mean"}, summary
    assert summary["n"] == run["cycles"], (field, summary)
    assert 0 < summary["p50"] <= summary["p90"] <= summary["p99"] <= summary["max"], summary
assert run["cpu_us_per_cycle"]["total"] > 0, run["cpu_us_per_cycle"]
# Two commands per node and cycle; the release script's GET and DEL count as commands too.
assert run["redis_commands_per_cycle"] >= 10, run["redis_commands_per_cycle"]
assert run["redis_cpu_us_per_cycle"] > 0, run
assert run["host"]["cpus"] >= 1, run["host"]
print("ok: fanout limit", run["cycles"], "cycles")
PY
