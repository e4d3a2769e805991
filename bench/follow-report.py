#!/usr/bin/env python3
"""bench/follow's table: one row per run of redlock-bench --series with a --fault-command.

  follow-report.py RESULTS.jsonl

Locks/s before the fault (the windows before it started), during it (from its start to
the end of its command or the moment the client had followed it, whichever is later) and
after (the rest of the window); the lowest
100 ms window; the fault command's own duration; and "followed after": from the fault's
start to the end of the last window in which member 1 (the member the fault changed)
answered with an error, or to the client's master_changed event for member 1 if later;
"back to 90 %" is from the fault's start to the first full second after that whose rate
is at least 90 % of the rate before. Member 1's connection
events (down, reconnected, master_changed, guarded) are listed with their times.
"""
import json
import sys


def per_s(counts, window_ms):
    return sum(counts) * 1000.0 / (len(counts) * window_ms) if counts else float("nan")


def row(run):
    series, fault = run["series"], run["fault"]
    w = series["window_ms"]
    acquired = series["acquired"]
    member = series["members"][0]
    start = int(fault["at_ms"] // w)
    # The last window at or after the fault in which member 1 answered with an error
    # (a member that answers late is not an error: the attempt was decided without it),
    # or the moment the client moved to the new master, whichever is later.
    last_bad = None
    for i in range(start, len(acquired)):
        if member["errors"][i]:
            last_bad = i
    followed_ms = ((last_bad + 1) * w - fault["at_ms"]) if last_bad is not None else 0.0
    for e in series["events"]:
        if e["node"] == member["node"] and e["kind"] == "master_changed":
            followed_ms = max(followed_ms, e["t_ms"] - fault["at_ms"])
    # "During" lasts until the fault's command ended (a resharding takes seconds) or the
    # client had followed, whichever is later.
    done_ms = fault["done_ms"] - fault["at_ms"]
    end = max(start, min(len(acquired), int((fault["at_ms"] + max(followed_ms, done_ms)) // w) + 1))
    before, during, after = acquired[:start], acquired[start:end], acquired[end:]
    # Back to normal: the first full second after the follow whose rate is 90 % of before.
    before_rate = per_s(before, w)
    back_ms = None
    span = int(1000 // w)
    for i in range(end, len(acquired) - span + 1):
        if per_s(acquired[i:i + span], w) >= 0.9 * before_rate:
            back_ms = i * w - fault["at_ms"]
            break
    errors = sum(member["errors"][start:])
    events = ["%s %s at +%.0f ms" % (e["kind"], e["detail"][:60], e["t_ms"] - fault["at_ms"])
              for e in series["events"] if e["node"] == member["node"]]
    return {
        "label": run["label"], "run": run["run"],
        "before": per_s(before, w), "during": per_s(during, w), "after": per_s(after, w),
        "lowest": min(acquired[start:]) * 1000.0 / w if acquired[start:] else float("nan"),
        "fault_ms": fault["done_ms"] - fault["at_ms"], "exit": fault["exit_status"],
        "followed_ms": followed_ms, "back_ms": back_ms, "member_errors": errors, "failures": run["failures"],
        "events": events, "error_texts": member.get("error_texts", {}),
    }


def main(path):
    rows = [row(json.loads(line)) for line in open(path) if line.strip()]
    print("| fault | run | locks/s before | during | after | lowest 100 ms window (/s) "
          "| fault command took | member 1 followed after | back to 90 % of before after "
          "| member 1 errors | failed attempts |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        during = "%.0f" % r["during"] if r["during"] == r["during"] else "-"
        after = "%.0f" % r["after"] if r["after"] == r["after"] else "- (fault outlasted the window)"
        back = "%.0f ms" % r["back_ms"] if r["back_ms"] is not None else "not in the window"
        print("| %s | %d | %.0f | %s | %s | %.0f | %.0f ms (exit %d) | %.0f ms | %s | %d | %d |" % (
            r["label"], r["run"], r["before"], during, after, r["lowest"], r["fault_ms"],
            r["exit"], r["followed_ms"], back, r["member_errors"], r["failures"]))
    print()
    for r in rows:
        print("- %s run %d, member 1 events: %s; its errors: %s" % (
            r["label"], r["run"], "; ".join(r["events"]) or "none",
            "; ".join("%s (%d)" % kv for kv in sorted(r["error_texts"].items(), key=lambda kv: -kv[1]))
            or "none"))


if __name__ == "__main__":
    main(sys.argv[1])
