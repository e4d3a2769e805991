#!/usr/bin/env python3
"""bench/cluster's arithmetic.

  cluster-servers.py BEFORE AFTER TOPOLOGY < redlock-bench line
      One JSON line: the bench's figures and, per server, its CPU and the lock commands
      it served between the two snapshots (INFO cpu + INFO commandstats of every server,
      each after a line "@ MEMBER PORT").
  cluster-servers.py --report RESULTS.jsonl
      The Markdown table of medians by workload and topology, with the ratios the
      cluster members are held to.
"""
import json
import statistics
import sys

# Commands that are not the lock's own work: the bench's and the client's bookkeeping
# (connection set-up, slot maps, the snapshots themselves).
NOT_LOCK_WORK = {"info", "cluster", "hello", "ping", "client", "command", "role", "subscribe",
                 "unsubscribe", "psubscribe", "ssubscribe", "auth", "select", "script", "config",
                 "readonly"}


def read_snapshot(path):
    servers, current = {}, None
    for line in open(path):
        line = line.strip()
        if line.startswith("@ "):
            _, member, port = line.split()
            current = servers.setdefault((int(member), int(port)),
                                         {"cpu_s": 0.0, "reads": 0, "calls": {}})
        elif line.startswith("total_reads_processed:"):
            current["reads"] = int(line.split(":")[1])
        elif line.startswith("used_cpu_user:") or line.startswith("used_cpu_sys:"):
            current["cpu_s"] += float(line.split(":")[1])
        elif line.startswith("cmdstat_"):
            name, fields = line[len("cmdstat_"):].split(":", 1)
            calls = int(dict(f.split("=") for f in fields.split(","))["calls"])
            current["calls"][name] = calls
    return servers


def measure(before_path, after_path, topology, bench_line):
    bench = json.loads(bench_line)
    before, after = read_snapshot(before_path), read_snapshot(after_path)
    cycles = bench["cycles"] or 1
    servers = []
    for key in sorted(after):
        b, a = before.get(key, {"cpu_s": 0.0, "reads": 0, "calls": {}}), after[key]
        commands = sum(n - b["calls"].get(name, 0) for name, n in a["calls"].items()
                       if name.split("|")[0] not in NOT_LOCK_WORK)
        servers.append({"member": key[0], "port": key[1],
                        "cpu_us_per_cycle": (a["cpu_s"] - b["cpu_s"]) * 1e6 / cycles,
                        "reads_per_cycle": (a["reads"] - b["reads"]) / cycles,
                        "commands": commands})
    return {"topology": topology, "label": bench["label"], "run": bench["run"],
            "cycles": bench["cycles"], "failures": bench["failures"],
            "error_kinds": bench["error_kinds"],
            "cycles_per_s": bench["ops_per_s"], "p50_ms": bench["cycle_ms"]["p50"],
            "client_cpu_us_per_cycle": bench["cpu_us_per_cycle"]["total"], "servers": servers}


def spread(row):
    """Per member, (max - min) / mean of its servers' lock commands; the largest."""
    worst = 0.0
    for member in {s["member"] for s in row["servers"]}:
        counts = [s["commands"] for s in row["servers"] if s["member"] == member]
        if len(counts) > 1 and statistics.mean(counts) > 0:
            worst = max(worst, (max(counts) - min(counts)) / statistics.mean(counts))
    return worst


def report(path):
    rows = [json.loads(line) for line in open(path) if line.strip()]
    groups = {}
    for row in rows:
        groups.setdefault((row["label"], row["topology"]), []).append(row)

    def median(label, topology, fn):
        return statistics.median(fn(r) for r in groups[(label, topology)])

    server_cpu = lambda r: statistics.mean(s["cpu_us_per_cycle"] for s in r["servers"])
    commands_per_cycle = lambda r: statistics.mean(s["commands"] for s in r["servers"]) / max(r["cycles"], 1)
    reads_per_cycle = lambda r: statistics.mean(s.get("reads_per_cycle", 0) for s in r["servers"])
    out = ["| workload | members | cycles/s | p50 ms | client CPU µs/cycle | CPU µs/cycle per server "
           "| lock commands/cycle per server | read batches/cycle per server "
           "| shard spread (max-min)/mean | failed attempts |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    labels = list(dict.fromkeys(r["label"] for r in rows))
    for label in labels:
        for topology in ("standalone", "cluster"):
            if (label, topology) not in groups:
                continue
            name = "5 standalone" if topology == "standalone" else "5 clusters x 3 shards"
            out.append("| %s | %s | %.0f | %.2f | %.1f | %.1f | %.2f | %.2f | %s | %.0f |" % (
                label, name, median(label, topology, lambda r: r["cycles_per_s"]),
                median(label, topology, lambda r: r["p50_ms"]),
                median(label, topology, lambda r: r["client_cpu_us_per_cycle"]),
                median(label, topology, server_cpu), median(label, topology, commands_per_cycle),
                median(label, topology, reads_per_cycle),
                "%.1f %%" % (100 * median(label, topology, spread))
                if topology == "cluster" and not label.startswith("hot") else "-",
                median(label, topology, lambda r: r["failures"])))
    out += ["", "| workload | client CPU cluster / standalone (target <= 1.2) "
            "| shard CPU / standalone server CPU (target ~0.33) | shard spread (target <= 10 %) |",
            "|---|---:|---:|---:|"]
    for label in labels:
        if (label, "standalone") not in groups or (label, "cluster") not in groups:
            continue
        client = median(label, "cluster", lambda r: r["client_cpu_us_per_cycle"]) / \
            median(label, "standalone", lambda r: r["client_cpu_us_per_cycle"])
        shard = median(label, "cluster", server_cpu) / median(label, "standalone", server_cpu)
        even = "one key: one shard" if label.startswith("hot") else \
            "%.1f %%" % (100 * median(label, "cluster", spread))
        out.append("| %s | %.2f | %.2f | %s |" % (label, client, shard, even))
    out.append("")
    runs = max(len(v) for v in groups.values()) if groups else 0
    out.append("Medians of %d run(s). Cycles per measurement: %d to %d (a fixed number of "
               "attempts; hot-key attempts mostly fail)." % (
                   runs, min(r["cycles"] for r in rows), max(r["cycles"] for r in rows)))
    print("\n".join(out))


if __name__ == "__main__":
    if sys.argv[1] == "--report":
        report(sys.argv[2])
    else:
        print(json.dumps(measure(sys.argv[1], sys.argv[2], sys.argv[3], sys.stdin.read())))
