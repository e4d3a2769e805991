#!/usr/bin/env python3
"""The lock family under real network partitions, made with Linux network namespaces.

Five redis-server nodes, the fenced store and three client hosts each run in a network
namespace of their own. Every host has a point-to-point veth pair (a /30) to each node
and one to the store, so that the path from one host to one node can be cut alone:

    host h (h = 0..2), link nN          node N (N = 0..4), link hH
    10.214.(h+1).(4N+1)/30  <--veth-->  10.214.(h+1).(4N+2)/30 :6379
    host h, link st                     store, link hH
    10.214.(h+1).21/30      <--veth-->  10.214.(h+1).22/30     :6379

A host therefore knows each node by an address of its own. A cut sets one end of a pair
down, and the kernel does the rest:
  - the node's end ("node side"): the host's end loses its carrier but keeps its address
    and route; its packets are dropped without a word (no RST, no ICMP), as behind a
    pulled cable. Established connections go silent, new ones time out.
  - the host's end ("host side"): its connected route goes with it, so a new connect
    fails at once with ENETUNREACH and an established connection's retransmissions fail
    inside the host.
The store's links are never cut.

Each host runs `redlock-chaos-worker --primitive mix` (exclusive locks, reentrant ones, key
sets, readers and writers, permits, fenced writes) against the five nodes; after each
scenario `redlock-chaos-check` reads the three hosts' records together.

Scenarios (times are fractions of the duration D, REDLOCK_NETNS_SECONDS, default 10 s):
  host_cut_from_all       host 0 cut from every node (node side) from 0.2 D to 0.5 D;
                          it must acquire nothing while cut and again after the heal
  host_cut_from_minority  host 1 cut from nodes 3 and 4 (host side) from 0.2 D to 0.8 D;
                          it must go on acquiring meanwhile
  split_views             from 0.2 D to 0.8 D host 0 misses nodes {3,4}, host 1 {0,1}
                          and host 2 {2}, all at once: three different majorities
  flapping_link           node 2's links to every host (node side) down 300 ms, up
                          300 ms, and host 0's link to node 0 (host side) down 450 ms,
                          up 450 ms, from 0.1 D to 0.9 D
  permit_quorum_lowered   split_views from the start, permits alone (K = 2, one key, one
                          thread per host) granted by 3 nodes instead of the safe 4
                          (the worker's test-only --unsafe-permit-quorum 3): the checker
                          MUST report permit violations, which shows that the zero
                          violations of the other scenarios are not a blind checker's

The in-model scenarios pass with no violation, no token regression, no stale write
accepted, every worker exiting 0 and at least --min-acquisitions (20) acquisitions. The
records of a failed scenario are kept and their directory named (--keep keeps all).

Everything created (namespaces, hence their links, and every process inside them) is
removed on every exit, also on failure, SIGINT or SIGTERM, and by a guardian process
after a SIGKILL (CTest's timeout; netns_lab.py). Exits 77 (CTest's skip) when
not root, when `ip netns` cannot create a namespace, or when redis-server is missing.

Usage: lock_partitions_test.py WORKER CHECKER [--seconds S] [--scenario A,B] [--keep]
       [--min-acquisitions N]
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

# The tests run from the source tree, which they leave as they found it.
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from netns_lab import (Failure, Namespaces, guard_signals, require_namespaces,  # noqa: E402
                       run, skip_if_unsupported)

NODES = 5
HOSTS = 3
PORT = 6379
STORE = NODES  # the store's pair is numbered after the nodes'
TTL_MS = 1000
WAIT_MS = 500

# Connects to every address given (from inside a namespace); fails on the first that
# does not answer in time.
CONNECT_PROBE = f"""
import socket, sys
for addr in sys.argv[1:]:
    socket.create_connection((addr, {PORT}), timeout=0.2).close()
"""


def pair_addresses(host, peer):
    """(the host's end, the peer's end) of the pair between a host and a node or the store."""
    return f"10.214.{host + 1}.{4 * peer + 1}", f"10.214.{host + 1}.{4 * peer + 2}"


def host_link(peer):
    return "st" if peer == STORE else f"n{peer}"


class Lab:
    """The namespaces, their links, the nodes and the store."""

    def __init__(self, worker, checker):
        self.worker = worker
        self.checker = checker
        self.spaces = Namespaces()
        self.processes = []
        self.down = set()  # (host, node, side) of the links cut now
        self.dir = tempfile.mkdtemp(prefix=f"{self.spaces.prefix}-locks-")

    def ns(self, name):
        return self.spaces.ns(name)

    def build(self):
        for n in range(NODES):
            self.spaces.add(f"n{n}")
        self.spaces.add("store")
        for h in range(HOSTS):
            self.spaces.add(f"h{h}")
            for peer in range(NODES + 1):
                far = "store" if peer == STORE else f"n{peer}"
                near_addr, far_addr = pair_addresses(h, peer)
                run("ip", "-n", self.ns(f"h{h}"), "link", "add", host_link(peer), "type", "veth",
                    "peer", "name", f"h{h}", "netns", self.ns(far))
                run("ip", "-n", self.ns(f"h{h}"), "addr", "add", f"{near_addr}/30", "dev",
                    host_link(peer))
                run("ip", "-n", self.ns(far), "addr", "add", f"{far_addr}/30", "dev", f"h{h}")
                run("ip", "-n", self.ns(f"h{h}"), "link", "set", host_link(peer), "up")
                run("ip", "-n", self.ns(far), "link", "set", f"h{h}", "up")
        # Each server answers on every address of its namespace, one per host.
        for name in [f"n{n}" for n in range(NODES)] + ["store"]:
            log = open(os.path.join(self.dir, f"redis-{name}.log"), "w")
            self.processes.append(subprocess.Popen(
                self.spaces.exec_argv(name, "redis-server", "--port", str(PORT), "--bind",
                                      "0.0.0.0", "--save", "", "--appendonly", "no",
                                      "--protected-mode", "no", "--daemonize", "no"),
                stdout=log, stderr=subprocess.STDOUT))
            log.close()
        self.wait_reachable()

    def wait_reachable(self):
        """Waits until every host reaches every node and the store: once built, and after
        a scenario healed its cuts (the neighbour entries are learnt again)."""
        deadline = time.monotonic() + 10
        for h in range(HOSTS):
            addrs = [pair_addresses(h, peer)[1] for peer in range(NODES + 1)]
            while True:
                probe = run(*self.spaces.exec_argv(f"h{h}", sys.executable, "-c", CONNECT_PROBE,
                                                   *addrs), check=False)
                if probe.returncode == 0:
                    break
                if time.monotonic() > deadline:
                    raise Failure(f"host {h} does not reach every node: {probe.stderr.strip()}")
                time.sleep(0.05)

    def link(self, host, node, state, side):
        if side == "node":
            run("ip", "-n", self.ns(f"n{node}"), "link", "set", f"h{host}", state)
        else:
            run("ip", "-n", self.ns(f"h{host}"), "link", "set", host_link(node), state)
        if state == "down":
            self.down.add((host, node, side))
        else:
            self.down.discard((host, node, side))

    def heal_all(self):
        for host, node, side in sorted(self.down):
            self.link(host, node, "up", side)

    def node_urls(self, host):
        return ",".join(f"redis://{pair_addresses(host, n)[1]}:{PORT}" for n in range(NODES))

    def store_url(self, host):
        return f"redis://{pair_addresses(host, STORE)[1]}:{PORT}"

    def close(self):
        return self.spaces.close(self.processes)


class Scenario:
    def __init__(self, name, what, schedule, check=None, seconds=None, in_model=True,
                 threads=3, keys=2, primitive="mix", extra=()):
        self.name = name
        self.what = what
        self.schedule = schedule  # duration_s -> [(at_s, what, [(host, node, state, side)])]
        self.check = check  # (stats, times) -> [failure messages]
        self.seconds = seconds
        self.in_model = in_model
        self.threads = threads
        self.keys = keys
        self.primitive = primitive
        self.extra = list(extra)


def cut(pairs, state, side):
    return [(h, n, state, side) for h, n in pairs]


def host_cut_from_all(d):
    pairs = [(0, n) for n in range(NODES)]
    # Healed at half time: the host must win locks again afterwards, and a client that
    # dropped its silent connections takes up to a connect timeout (1 s) to be back.
    return [(0.2 * d, "host 0 cut from every node", cut(pairs, "down", "node")),
            (0.5 * d, "host 0 healed", cut(pairs, "up", "node"))]


def check_cut_from_all(stats, times):
    cut_at, healed_at = times["host 0 cut from every node"][1], times["host 0 healed"][0]
    # An acquire that returns after the cut may have been granted before it, by up to a
    # ttl on a loaded machine (later, it would have returned validity_expired).
    during = [t for t in stats["h0"]["acquired_at"] if cut_at + TTL_MS * 1e6 < t < healed_at]
    after = [t for t in stats["h0"]["acquired_at"] if t > healed_at]
    out = []
    if during:
        out.append(f"host 0 acquired {len(during)} times while cut from every node")
    if not after:
        out.append("host 0 acquired nothing after the heal")
    else:
        stats["notes"].append(f"host 0's first acquisition {(min(after) - healed_at) / 1e6:.0f} ms "
                              f"after the heal began")
    return out


def host_cut_from_minority(d):
    pairs = [(1, 3), (1, 4)]
    return [(0.2 * d, "host 1 cut from nodes 3, 4", cut(pairs, "down", "host")),
            (0.8 * d, "host 1 healed", cut(pairs, "up", "host"))]


def check_cut_from_minority(stats, times):
    cut_at, healed_at = times["host 1 cut from nodes 3, 4"][1], times["host 1 healed"][0]
    during = [t for t in stats["h1"]["acquired_at"] if cut_at < t < healed_at]
    if not during:
        return ["host 1 acquired nothing while it still reached three nodes of five"]
    stats["notes"].append(f"host 1 acquired {len(during)} times while cut from nodes 3, 4")
    return []


VIEWS = {0: [3, 4], 1: [0, 1], 2: [2]}


def split_pairs():
    return [(h, n) for h, missing in VIEWS.items() for n in missing]


def split_views(d):
    return [(0.2 * d, "split views", cut(split_pairs(), "down", "node")),
            (0.8 * d, "views healed", cut(split_pairs(), "up", "node"))]


def check_split_views(stats, times):
    split_at, healed_at = times["split views"][1], times["views healed"][0]
    out, counts = [], []
    for h in range(HOSTS):
        during = [t for t in stats[f"h{h}"]["acquired_at"] if split_at < t < healed_at]
        counts.append(len(during))
        if not during:
            out.append(f"host {h} acquired nothing while it saw a majority")
    stats["notes"].append(f"acquisitions per host during the split: {counts}")
    return out


def flapping_link(d):
    events = []
    for period_s, half, pairs, side in ((0.6, 0.3, [(h, 2) for h in range(HOSTS)], "node"),
                                         (0.9, 0.45, [(0, 0)], "host")):
        t = 0.1 * d
        while t + period_s <= 0.9 * d:
            events.append((t, f"down {pairs}", cut(pairs, "down", side)))
            events.append((t + half, f"up {pairs}", cut(pairs, "up", side)))
            t += period_s
    return sorted(events, key=lambda e: e[0])


def permit_quorum_lowered(d):
    return [(0.0, "split views", cut(split_pairs(), "down", "node"))]


def scenarios(seconds):
    lowered_s = max(4.0, 0.6 * seconds)
    return [
        Scenario("host_cut_from_all", "host 0 cut from every node, then healed",
                 host_cut_from_all, check_cut_from_all),
        Scenario("host_cut_from_minority", "host 1 cut from nodes 3 and 4",
                 host_cut_from_minority, check_cut_from_minority),
        Scenario("split_views", "hosts 0, 1, 2 miss nodes {3,4}, {0,1}, {2} at once",
                 split_views, check_split_views),
        Scenario("flapping_link", "node 2's links and host 0's link to node 0 flapping",
                 flapping_link),
        Scenario("permit_quorum_lowered",
                 "TEST ONLY: split views, permits granted by 3 nodes (--unsafe-permit-quorum 3)",
                 permit_quorum_lowered, seconds=lowered_s, in_model=False, threads=1, keys=1,
                 primitive="semaphore", extra=["--unsafe-permit-quorum", "3"]),
    ]


def host_stats(path):
    """Acquisition times and outcomes of one host's records."""
    acquired_at, errors = [], {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                if record.get("type") != "attempt":
                    continue
                if record.get("result") == "acquired":
                    acquired_at.append(record.get("at_ns", 0))
                elif record.get("result") == "error":
                    code = str(record.get("code"))
                    errors[code] = errors.get(code, 0) + 1
    return {"acquired_at": acquired_at, "errors": errors}


def run_scenario(lab, scenario, seconds, min_acquisitions, keep):
    """Runs one scenario; returns (passed, one line of numbers)."""
    duration = scenario.seconds or seconds
    records = os.path.join(lab.dir, scenario.name)
    os.makedirs(records)
    schedule = sorted(scenario.schedule(duration), key=lambda e: e[0])
    faults_log = open(os.path.join(records, "faults.jsonl"), "w")
    times = {}

    # Each `ip` call takes milliseconds: a cut is whole only once the last link is down,
    # and a heal begins with the first one up, so both ends are kept.
    def apply(what, changes):
        begin = time.monotonic_ns()
        for h, n, state, side in changes:
            lab.link(h, n, state, side)
        times[what] = (begin, time.monotonic_ns())
        faults_log.write(json.dumps({"type": "fault", "begin_ns": begin, "end_ns": times[what][1],
                                     "what": what}) + "\n")

    failures = []
    workers = []
    started = time.monotonic()
    try:
        # A fault at 0 is in place before the workers' first connections.
        while schedule and schedule[0][0] <= 0:
            _, what, changes = schedule.pop(0)
            apply(what, changes)
        for h in range(HOSTS):
            log = open(os.path.join(records, f"worker-h{h}.log"), "w")
            argv = lab.spaces.exec_argv(
                f"h{h}", lab.worker, "--nodes", lab.node_urls(h), "--store", lab.store_url(h),
                "--events", os.path.join(records, f"events-h{h}.jsonl"), "--id", f"h{h}",
                "--threads", str(scenario.threads), "--keys", str(scenario.keys),
                "--duration", f"{int(duration * 1000)}ms", "--ttl", f"{TTL_MS}ms",
                "--wait", f"{WAIT_MS}ms", "--hold", "20ms",
                "--prefix", f"chaos:netns:{scenario.name}:", "--seed", str(h + 1),
                "--primitive", scenario.primitive, "--unfenced-every", "2",
                *scenario.extra)
            process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
            log.close()
            lab.processes.append(process)
            workers.append(process)
        t0 = time.monotonic()
        for at, what, changes in schedule:
            # On a loaded machine `ip` is slow and the schedule falls behind; what it has
            # not done when the workers stop would meet no one.
            if time.monotonic() - t0 > duration:
                break
            time.sleep(max(0.0, t0 + at - time.monotonic()))
            apply(what, changes)
        # A worker ends after its duration plus at most one wait and an unlock.
        deadline = t0 + duration + (WAIT_MS + 2 * TTL_MS) / 1000 + 10
        for h, process in enumerate(workers):
            try:
                code = process.wait(timeout=max(1.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
                code = "killed after running too long"
            if code != 0:
                failures.append(f"the worker of host {h} exited {code} "
                                f"(see {records}/worker-h{h}.log)")
    finally:
        faults_log.close()
        lab.heal_all()
    elapsed = time.monotonic() - started

    files = [os.path.join(records, f"events-h{h}.jsonl") for h in range(HOSTS)]
    checked = run(lab.checker, *[f for f in files if os.path.exists(f)], check=False)
    if checked.returncode not in (0, 1):
        raise Failure(f"{lab.checker} exited {checked.returncode}: {checked.stderr.strip()}")
    report = json.loads(checked.stdout)
    with open(os.path.join(records, "check.json"), "w") as f:
        f.write(checked.stdout)

    stats = {f"h{h}": host_stats(files[h]) for h in range(HOSTS)}
    stats["notes"] = []
    acquisitions = report["acquisitions"]
    violations = report["violations"]
    if scenario.in_model:
        if violations:
            failures.append(f"{violations} violations ({report.get('violations_by_primitive')})")
        if report["token_regressions"]:
            failures.append(f"{report['token_regressions']} token regressions")
        if acquisitions < min_acquisitions:
            failures.append(f"{acquisitions} acquisitions, fewer than {min_acquisitions}")
        if scenario.check:
            try:
                failures += scenario.check(stats, times)
            except KeyError as missing:
                failures.append(f"the fault {missing} was not applied before the workers "
                                f"stopped (a machine too loaded for the schedule)")
    else:
        permit = report.get("violations_by_primitive", {}).get("permit", 0)
        if permit == 0:
            failures.append("the checker found no permit violation with permits granted by 3 "
                            "nodes of 5 under split views (it must)")
    if report["stale_writes_accepted"]:
        failures.append(f"{report['stale_writes_accepted']} stale writes accepted")

    per_host = [len(stats[f"h{h}"]["acquired_at"]) for h in range(HOSTS)]
    errors = {}
    for h in range(HOSTS):
        for code, count in stats[f"h{h}"]["errors"].items():
            errors[code] = errors.get(code, 0) + count
    line = (f"{scenario.name} ({scenario.what}): {acquisitions} acquisitions (per host {per_host}; "
            f"{json.dumps(report.get('acquisitions_by_primitive', {}), sort_keys=True)}), "
            f"{report['conflicts']} conflicts, {report['errors']} errors "
            f"{json.dumps(errors, sort_keys=True)}, {violations} violations "
            f"{json.dumps(report.get('violations_by_primitive', {}), sort_keys=True)}, "
            f"{report['token_regressions']} token regressions, "
            f"{report['stale_writes_accepted']} stale writes accepted "
            f"({report['stale_writes_rejected']} rejected), {elapsed:.1f} s")
    for note in stats["notes"]:
        line += f"\n    {note}"
    passed = not failures
    if not passed:
        line += "".join(f"\n  FAIL: {failure}" for failure in failures)
        line += f"\n  records kept in {records}"
    elif not keep:
        shutil.rmtree(records, ignore_errors=True)
    return passed, line


def main():
    parser = argparse.ArgumentParser(
        description="The lock family under real network partitions (network namespaces).")
    parser.add_argument("worker", help="redlock-chaos-worker")
    parser.add_argument("checker", help="redlock-chaos-check")
    parser.add_argument("--seconds", type=float,
                        default=float(os.environ.get("REDLOCK_NETNS_SECONDS", "10")),
                        help="duration of each in-model scenario (REDLOCK_NETNS_SECONDS, 10)")
    parser.add_argument("--scenario", default="",
                        help="scenarios to run, comma-separated (default: all)")
    parser.add_argument("--min-acquisitions", type=int, default=20)
    parser.add_argument("--keep", action="store_true",
                        help="keep the records of passing scenarios too")
    args = parser.parse_args()
    worker, checker = os.path.abspath(args.worker), os.path.abspath(args.checker)
    chosen = scenarios(args.seconds)
    if args.scenario:
        wanted = args.scenario.split(",")
        unknown = set(wanted) - {s.name for s in chosen}
        if unknown:
            parser.error(f"unknown scenarios {sorted(unknown)}; "
                         f"known: {[s.name for s in chosen]}")
        chosen = [s for s in chosen if s.name in wanted]
    for binary in (worker, checker):
        if not os.access(binary, os.X_OK):
            print(f"{binary} is not an executable", file=sys.stderr)
            return 2

    require_namespaces()
    guard_signals()
    lab = Lab(worker, checker)
    started = time.monotonic()
    ok = False
    try:
        try:
            lab.build()
        except Failure as e:
            skip_if_unsupported(e)
            raise
        print(f"namespaces {lab.spaces.prefix}-*: 5 nodes, a store, 3 hosts with a veth pair "
              f"to each ({time.monotonic() - started:.1f} s to set up); ttl {TTL_MS} ms, "
              f"wait {WAIT_MS} ms, {args.seconds:g} s a scenario", flush=True)
        ok = True
        for scenario in chosen:
            lab.wait_reachable()
            passed, line = run_scenario(lab, scenario, args.seconds, args.min_acquisitions,
                                        args.keep)
            print(line, flush=True)
            ok = ok and passed
    except Failure as e:
        ok = False
        print(f"FAIL: {e}", file=sys.stderr)
        print(f"records kept in {lab.dir}", file=sys.stderr)
    finally:
        if not lab.close():
            ok = False
        if ok and not args.keep:
            shutil.rmtree(lab.dir, ignore_errors=True)
    print(f"{'passed' if ok else 'failed'} in {time.monotonic() - started:.1f} s"
          + ("" if ok and not args.keep else f"; records in {lab.dir}"), flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
