#!/usr/bin/env python3
"""Leader election under real network partitions, made with Linux network namespaces.

Five redis-server nodes and two `redlock elect` candidates (A and B) each run in a
network namespace of their own. Every namespace has one veth whose other end is a port
of a bridge in one more namespace (nothing is added to the root namespace):

    node1 .. node5 (10.213.0.11-15:6379)   cand-a (10.213.0.21)   cand-b (10.213.0.22)
         |  eth0                                |  eth0                |  eth0
         +------------------ br0 (namespace "br") ---------------------+

A partition is a bridge port set down (`ip link set p-X down` in the bridge namespace):
the host behind it keeps its address and route and sees no error, its packets are simply
lost, as behind a pulled cable or a dead switch port.

Scenario A, repeated: A leads, B waits; A's port goes down. A's command must be sent the
lost signal and record "stopped" before B's command records "start", B must lead within
a few TTLs, and A's `redlock elect --once` must exit 4. The failover time (port down to
B's command starting) is printed, median and max.

Scenario B: A leads, B waits; the ports of two of the five nodes go down for several
TTLs. A keeps the quorum: its command is not signalled, B's does not start, and
`redlock leader` (asked from B's namespace) still names A with the same term.

Timestamps come from CLOCK_MONOTONIC (time.monotonic_ns()), which network namespaces
share. Everything created (namespaces, hence their links, and every process inside them)
is removed on exit, also on failure. Exits 77 (CTest's skip) when not root, when
`ip netns` cannot create a namespace, or when redis-server is missing.

Usage: partition_test.py REDLOCK_BINARY   (REDLOCK_NETNS_RUNS: repetitions of A, default 5)
"""

import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

# The tests run from the source tree, which they leave as they found it.
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from netns_lab import (Failure, Namespaces, guard_signals, require_namespaces,  # noqa: E402
                       run, skip_if_unsupported)

TTL_S = 3
TTL = f"{TTL_S}s"
NODES = 5
PORT = 6379
SUBNET = "10.213.0"
NODE_ADDR = [f"{SUBNET}.{11 + i}" for i in range(NODES)]
CANDIDATE_ADDR = {"a": f"{SUBNET}.21", "b": f"{SUBNET}.22"}

# The command each candidate runs while leading: it appends "start ID NS PID" to the
# shared log at once, and "stopped ID NS PID" when sent the lost signal (SIGUSR1, so that
# the SIGTERM the test ends candidates with is not mistaken for a loss).
CANDIDATE_COMMAND = r"""
import os, signal, sys, time
ident, log = sys.argv[1], sys.argv[2]
def note(word):
    line = f"{word} {ident} {time.monotonic_ns()} {os.getpid()}\n".encode()
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    os.write(fd, line)
    os.close(fd)
def lost(signo, frame):
    note("stopped")
    sys.exit(0)
signal.signal(signal.SIGUSR1, lost)
note("start")
while True:
    signal.pause()
"""

# Connects to every node's port (from inside a namespace); fails on the first that does
# not answer in time.
CONNECT_PROBE = f"""
import socket, sys
for addr in sys.argv[1:]:
    socket.create_connection((addr, {PORT}), timeout=0.2).close()
"""


class Lab:
    """The namespaces, the bridge, the nodes; removes all of it in close()."""

    def __init__(self, redlock):
        self.redlock = redlock
        self.spaces = Namespaces()
        self.prefix = self.spaces.prefix
        self.processes = []
        self.dir = tempfile.mkdtemp(prefix=f"{self.prefix}-")
        self.script = os.path.join(self.dir, "command.py")
        with open(self.script, "w") as f:
            f.write(CANDIDATE_COMMAND)
        self.nodes_arg = ",".join(f"redis://{a}:{PORT}" for a in NODE_ADDR)

    def ns(self, name):
        return self.spaces.ns(name)

    def add_namespace(self, name):
        self.spaces.add(name)

    def attach(self, name, addr):
        """A namespace of its own for `name`, joined to the bridge by the port p-NAME."""
        self.add_namespace(name)
        br = self.ns("br")
        run("ip", "-n", br, "link", "add", f"p-{name}", "type", "veth", "peer", "name", "eth0",
            "netns", self.ns(name))
        run("ip", "-n", br, "link", "set", f"p-{name}", "master", "br0", "up")
        run("ip", "-n", self.ns(name), "addr", "add", f"{addr}/24", "dev", "eth0")
        run("ip", "-n", self.ns(name), "link", "set", "eth0", "up")

    def port(self, name, state):
        run("ip", "-n", self.ns("br"), "link", "set", f"p-{name}", state)

    def build(self):
        self.add_namespace("br")
        run("ip", "-n", self.ns("br"), "link", "add", "br0", "type", "bridge")
        run("ip", "-n", self.ns("br"), "link", "set", "br0", "up")
        for i, addr in enumerate(NODE_ADDR):
            self.attach(f"n{i + 1}", addr)
        for name, addr in CANDIDATE_ADDR.items():
            self.attach(name, addr)
        for i, addr in enumerate(NODE_ADDR):
            log = open(os.path.join(self.dir, f"node{i + 1}.log"), "w")
            self.processes.append(subprocess.Popen(
                ["ip", "netns", "exec", self.ns(f"n{i + 1}"), "redis-server", "--port", str(PORT),
                 "--bind", addr, "--save", "", "--appendonly", "no", "--protected-mode", "no",
                 "--daemonize", "no"], stdout=log, stderr=subprocess.STDOUT))
        for name in CANDIDATE_ADDR:
            self.wait_reachable(name)

    def wait_reachable(self, name):
        """Waits until every node accepts a connection from `name`'s namespace: once the
        namespaces are built, and after a cut port came back up (neighbour entries and the
        bridge's forwarding table are learnt again on the first packets)."""
        deadline = time.monotonic() + 10
        while True:
            probe = run("ip", "netns", "exec", self.ns(name), sys.executable, "-c", CONNECT_PROBE,
                        *NODE_ADDR, check=False)
            if probe.returncode == 0:
                return
            if time.monotonic() > deadline:
                raise Failure(f"the nodes are not reachable from {name}: {probe.stderr.strip()}")
            time.sleep(0.05)

    def leader(self, key, where, check=True):
        return run("ip", "netns", "exec", self.ns(where), self.redlock, "--nodes", self.nodes_arg,
                   "--no-guard-young-members", "leader", "--json", key, check=check)

    def elect(self, name, key, log):
        err = open(os.path.join(self.dir, f"elect-{name}-{key}.err"), "w")
        process = subprocess.Popen(
            ["ip", "netns", "exec", self.ns(name), self.redlock, "--nodes", self.nodes_arg,
             "--no-guard-young-members", "--verbose", "elect", "--once", "--ttl", TTL,
             "--id", name.upper(), "--lost-signal", "USR1", key,
             "--", sys.executable, self.script, name.upper(), log],
            stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
        process.err_path = err.name
        self.processes.append(process)
        return process

    def show_logs(self):
        """What the candidates and the shared logs said, for a failure's diagnosis."""
        for name in sorted(os.listdir(self.dir)):
            if name.endswith((".err", ".log")) and not name.startswith("node"):
                with open(os.path.join(self.dir, name)) as f:
                    lines = f.read().splitlines()[-15:]
                print(f"--- {name} (last {len(lines)} lines)", file=sys.stderr)
                for line in lines:
                    print(f"    {line}", file=sys.stderr)

    def close(self):
        # Every process inside our namespaces is ours: the nodes, the candidates and
        # their commands (which outlive a killed `redlock elect`). Deleting the bridge's
        # namespace takes every veth with it.
        closed = self.spaces.close(self.processes)
        shutil.rmtree(self.dir, ignore_errors=True)
        return closed


def read_log(path):
    events = []
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                word, ident, ns, pid = line.split()
                events.append((word, ident, int(ns), int(pid)))
    return events


def find(events, word, ident):
    return next((e for e in events if e[0] == word and e[1] == ident), None)


def wait_for(condition, seconds, what):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.005)
    raise Failure(f"timed out after {seconds} s waiting for {what}")


def stderr_of(process):
    with open(process.err_path) as f:
        return f.read().strip()


def end(process):
    """SIGTERM to a `redlock elect` (forwarded to its command), then its exit code."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
    try:
        return process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        return process.wait()


def lead_with_a_waiting_b(lab, key, log):
    a = lab.elect("a", key, log)
    wait_for(lambda: find(read_log(log), "start", "A") or a.poll() is not None, 10,
             f"A to lead {key}")
    if a.poll() is not None:
        raise Failure(f"A's `redlock elect` for {key} exited {a.returncode}: {stderr_of(a)}")
    b = lab.elect("b", key, log)
    # B's first attempt finds the key taken and it waits; `leader` from B's side names A.
    seen = json.loads(lab.leader(key, "b").stdout)
    if not seen["leader"] or seen["leader"]["identity"] != "A":
        raise Failure(f"{key}: B's side does not see A leading: {seen}")
    time.sleep(0.3)
    if b.poll() is not None:
        raise Failure(f"B exited while A led {key}: {b.returncode} {stderr_of(b)}")
    return a, b, seen["leader"]["term"]


def scenario_a(lab, runs):
    failover, stop_after_cut, gap, validity_left = [], [], [], []
    for run_no in range(runs):
        key = f"netns-a{run_no}"
        log = os.path.join(lab.dir, f"{key}.log")
        a, b, a_term = lead_with_a_waiting_b(lab, key, log)
        lab.port("a", "down")
        cut = time.monotonic_ns()
        def b_started():
            events = read_log(log)
            return events if find(events, "start", "B") else None

        try:
            events = wait_for(b_started, 3 * TTL_S, f"B to lead {key} after A was cut off")
            b_start = find(events, "start", "B")[2]
            a_stop = find(events, "stopped", "A")
            if a_stop is None:
                raise Failure(f"{key}: B started {(b_start - cut) / 1e6:.0f} ms after the cut "
                              f"and A's command was never signalled: {events}")
            if not a_stop[2] < b_start:
                raise Failure(f"{key}: A's command stopped {(a_stop[2] - b_start) / 1e6:.1f} ms "
                              f"AFTER B's started: {events}")
            seen = json.loads(lab.leader(key, "b").stdout)
            now = seen["leader"]
            if not now or now["identity"] != "B" or now["term"] <= a_term:
                raise Failure(f"{key}: B's command runs but leader shows {seen}, not B with a "
                              f"term above A's {a_term}")
            try:
                code = a.wait(timeout=TTL_S)
            except subprocess.TimeoutExpired:
                raise Failure(f"{key}: A's `redlock elect --once` still runs after losing")
            if code != 4:
                raise Failure(f"{key}: A exited {code}, not 4 (lost): {stderr_of(a)}")
        finally:
            lab.port("a", "up")
            end(b)
            end(a)
        lab.wait_reachable("a")
        left = re.search(r"with (\d+) ms of validity left", stderr_of(a))
        validity_left.append(int(left.group(1)) if left else None)
        failover.append((b_start - cut) / 1e6)
        stop_after_cut.append((a_stop[2] - cut) / 1e6)
        gap.append((b_start - a_stop[2]) / 1e6)
        print(f"  run {run_no + 1}: A stopped {stop_after_cut[-1]:.0f} ms after the cut, "
              f"B started {failover[-1]:.0f} ms after it ({gap[-1]:.0f} ms after A stopped); "
              f"A's elect signalled with {validity_left[-1]} ms of validity left",
              flush=True)
    print(f"scenario A: leader cut off from every node, ttl {TTL_S * 1000} ms, {runs} runs:\n"
          f"  failover (port down -> B's command starts): "
          f"median {statistics.median(failover):.0f} ms, "
          f"max {max(failover):.0f} ms, min {min(failover):.0f} ms\n"
          f"  A's command stopped after the cut: "
          f"median {statistics.median(stop_after_cut):.0f} ms, max {max(stop_after_cut):.0f} ms\n"
          f"  A stopped before B started by: "
          f"min {min(gap):.0f} ms, median {statistics.median(gap):.0f} ms\n"
          f"  validity left when A's elect signalled its command (its own report): "
          f"{', '.join(f'{v} ms' for v in validity_left)}",
          flush=True)


def scenario_b(lab):
    key = "netns-b"
    log = os.path.join(lab.dir, f"{key}.log")
    a, b, term = lead_with_a_waiting_b(lab, key, log)
    cut = ["n4", "n5"]
    for name in cut:
        lab.port(name, "down")
    try:
        hold = 3 * TTL_S
        deadline = time.monotonic() + hold
        while time.monotonic() < deadline:
            events = read_log(log)
            if find(events, "stopped", "A") or find(events, "start", "B"):
                raise Failure(f"{key}: with 2 of 5 nodes cut off the leadership changed: {events}")
            for name, process in (("A", a), ("B", b)):
                if process.poll() is not None:
                    raise Failure(f"{key}: {name} exited {process.returncode}: "
                                  f"{stderr_of(process)}")
            time.sleep(0.05)
        seen = json.loads(lab.leader(key, "b").stdout)
        now = seen["leader"]
        if not now or now["identity"] != "A" or now["term"] != term:
            raise Failure(f"{key}: after {hold} s without n4 and n5, leader shows {seen}, "
                          f"not A with term {term}")
    finally:
        for name in cut:
            lab.port(name, "up")
        end(b)
        end(a)
    print(f"scenario B: nodes n4 and n5 cut off for {hold * 1000} ms (ttl {TTL_S * 1000} ms): "
          f"A led throughout (term {term}), B's command never started", flush=True)


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    redlock = os.path.abspath(sys.argv[1])
    require_namespaces()
    runs = int(os.environ.get("REDLOCK_NETNS_RUNS", "5"))

    # An interrupt or a SIGTERM ends the test through the finally below (CTest's timeout,
    # a SIGKILL, leaves the cleanup to the guardian of netns_lab's namespaces).
    guard_signals()

    lab = Lab(redlock)
    started = time.monotonic()
    ok = False
    try:
        try:
            lab.build()
        except Failure as e:
            skip_if_unsupported(e)
            raise
        print(f"namespaces {lab.prefix}-*: 5 nodes, candidates A and B, one bridge "
              f"({time.monotonic() - started:.1f} s to set up)", flush=True)
        scenario_a(lab, runs)
        scenario_b(lab)
        ok = True
    except Failure as e:
        print(f"FAIL: {e}", file=sys.stderr)
        lab.show_logs()
    finally:
        if not lab.close():
            ok = False
    print(f"{'passed' if ok else 'failed'} in {time.monotonic() - started:.1f} s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
