#!/usr/bin/env bash
# bench_handoff_smoke: redlock-handoff-bench runs for half a second with 4 workers and
# prints one redlock-bench/v1 line with the fields bench/compare reads. Not a timing
# test: any handoffs/s above zero passes.
#
#   smoke_test.sh path/to/redlock-handoff-bench
set -euo pipefail
bench=$1
output=$("$bench" --workers 4 --duration 0.5 --warmup 0.1 --label smoke --run 2)
echo "$output"
python3 - "$output" <<'PY'
import json, sys
lines = [l for l in sys.argv[1].splitlines() if l.strip()]
assert len(lines) == 1, ("one line expected", lines)
run = json.loads(lines[0])
assert run["schema"] == "redlock-bench/v1", run["schema"]
assert run["bench"] == "redlock-handoff-bench", run["bench"]
assert (run["label"], run["run"], run["workers"]) == ("smoke", 2, 4), run
assert run["elapsed_s"] > 0 and run["ops_per_s"] > 0, run
assert run["handoffs_per_cycle"] == 2, run
assert run["handoffs"] == 2 * run["cycles"] and run["cycles"] > 0, run
for field in ("cpu_us_per_handoff", "cpu_us_per_cycle"):
    cost = run[field]
    assert set(cost) == {"user", "system", "total"}, (field, cost)
    assert cost["total"] is not None and cost["total"] > 0, (field, cost)
# Rounded separately, so only about twice.
assert abs(run["cpu_us_per_cycle"]["total"] - 2 * run["cpu_us_per_handoff"]["total"]) <= 0.2, run
switches = run["client_ctx_switches_per_cycle"]
assert set(switches) == {"voluntary", "involuntary"}, switches
assert run["host"]["cpus"] >= 1, run["host"]
print("ok: handoff", run["handoffs"], "handoffs")
PY
