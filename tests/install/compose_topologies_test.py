#!/usr/bin/env python3
"""ctest compose_topologies: compose/sentinel.yml and compose/cluster.yml work, proved
without Docker.

Every service of those files uses host networking, so a container's process is the
same process started on the host (the image's paths and user aside, which the
commands do not depend on: each runs in its working directory, here a scratch
directory of its own). For each file the test reads the services as `docker-compose
config` resolves them (anchors merged), starts every service's command verbatim with
the service's environment, waits until the one-shot services exit 0 and every
healthcheck passes, checks that the addresses handed to clients are loopback ones,
takes a lock that every member must grant with the redlock CLI on the exact
REDLOCK_NODES line of the file's header, releases it, and stops every process it
started by pid (SIGTERM, then SIGKILL), leaving none.

Usage: compose_topologies_test.py DOCKER_COMPOSE REDLOCK_CLI COMPOSE_FILE...
"""

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

try:
    import yaml
except ImportError:
    sys.exit("FAILED: python3 has no yaml module (apt-get install python3-yaml, or scripts/setup)")

# Each deadline is well inside the ctest TIMEOUT, so the test stops its processes
# itself rather than being killed with them still running.
ONE_SHOT_DEADLINE_S = 30
HEALTHY_DEADLINE_S = 40
STOP_GRACE_S = 5
CLUSTER_BUS_OFFSET = 10000

checks = 0


class Failure(Exception):
    pass


def check(what, ok):
    global checks
    if not ok:
        raise Failure(what)
    checks += 1


def shell_text(value):
    """What the container's shell gets: compose turns `$$` into `$`, and `config`
    prints it escaped again."""
    return str(value).replace("$$", "$")


def header_nodes(path):
    with open(path, encoding="utf-8") as f:
        lines = [m.group(1) for m in (re.match(r"^#\s+export REDLOCK_NODES=(\S+)$", l) for l in f) if m]
    check(f"{path}: exactly one `export REDLOCK_NODES=` line in the header", len(lines) == 1)
    return lines[0]


class Service:
    def __init__(self, name, spec):
        self.name = name
        self.spec = spec
        self.env = {k: str(v) for k, v in (spec.get("environment") or {}).items()}
        self.command = [shell_text(a) for a in spec["command"]]
        self.one_shot = spec.get("restart", "no") == "no"
        self.cluster_server = "--cluster-enabled yes" in " ".join(self.command)
        self.proc = None
        self.dir = None

    def ports(self):
        """The loopback ports the service listens on: PORT, and the cluster bus port
        beside it for a cluster server."""
        if "PORT" not in self.env:
            return []
        port = int(self.env["PORT"])
        return [port, port + CLUSTER_BUS_OFFSET] if self.cluster_server else [port]

    def process_env(self):
        env = dict(os.environ)
        env.update(self.env)
        return env

    def healthcheck(self):
        test = (self.spec.get("healthcheck") or {}).get("test")
        if not test:
            return None
        if test[0] == "CMD-SHELL":
            return ["sh", "-c", shell_text(test[1])]
        check(f"{self.name}: healthcheck is CMD or CMD-SHELL", test[0] == "CMD")
        return [shell_text(a) for a in test[1:]]

    def healthy(self):
        try:
            return subprocess.run(self.healthcheck(), env=self.process_env(), cwd=self.dir,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  timeout=2).returncode == 0
        except subprocess.TimeoutExpired:
            return False

    def log_tail(self):
        try:
            with open(os.path.join(self.dir, "service.log"), encoding="utf-8", errors="replace") as f:
                return "".join(f.readlines()[-8:])
        except OSError:
            return "(no log)\n"


def load_services(docker_compose, path):
    out = subprocess.run([docker_compose, "-f", path, "config"], check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    services = [Service(n, s) for n, s in sorted(yaml.safe_load(out)["services"].items())]
    for s in services:
        check(f"{path}: {s.name} uses network_mode: host", s.spec.get("network_mode") == "host")
        check(f"{path}: {s.name} runs image redis:7", s.spec.get("image") == "redis:7")
        check(f"{path}: {s.name} runs a command", bool(s.command))
    return services


def require_free(path, services):
    seen = {}
    for s in services:
        for port in s.ports():
            check(f"{path}: port {port} is used by {seen.get(port)} and {s.name}", port not in seen)
            seen[port] = s.name
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
                # As redis-server binds: a port in TIME_WAIT is free, one listened on is not.
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                try:
                    sock.bind(("127.0.0.1", port))
                except OSError as e:
                    raise Failure(f"port {port} of 127.0.0.1, which {s.name} of {path} needs, is not "
                                  f"free ({e.strerror}); stop what listens there "
                                  f"(ss -ltnp 'sport = :{port}') and run the test again")
    return seen


def start(services, work):
    for s in services:
        s.dir = os.path.join(work, s.name)
        os.makedirs(s.dir)
        with open(os.path.join(s.dir, "service.log"), "wb") as log:
            # A session of its own: the process never gets the terminal's signals, and
            # its group id is its pid, which is how stop() reaches a one-shot's children.
            s.proc = subprocess.Popen(s.command, cwd=s.dir, env=s.process_env(),
                                      stdin=subprocess.DEVNULL, stdout=log,
                                      stderr=subprocess.STDOUT, start_new_session=True)


def stop(services):
    """SIGTERM to every process still running, SIGKILL to those that outlive the grace
    period; every one is reaped, so none is left behind."""
    running = [s for s in services if s.proc and s.proc.poll() is None]
    for s in running:
        os.killpg(s.proc.pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_GRACE_S
    for s in running:
        try:
            s.proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            print(f"SIGKILL to {s.name} (pid {s.proc.pid}): still running {STOP_GRACE_S} s after SIGTERM",
                  file=sys.stderr)
            os.killpg(s.proc.pid, signal.SIGKILL)
            s.proc.wait()
    return [s for s in services if s.proc and s.proc.poll() is None]


def wait_ready(path, services):
    deadline = time.monotonic() + ONE_SHOT_DEADLINE_S
    for s in (s for s in services if s.one_shot):
        try:
            rc = s.proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            raise Failure(f"{path}: {s.name} still running after {ONE_SHOT_DEADLINE_S} s:\n{s.log_tail()}")
        check(f"{path}: {s.name} exited with status {rc}:\n{s.log_tail()}", rc == 0)

    deadline = time.monotonic() + HEALTHY_DEADLINE_S
    pending = [s for s in services if not s.one_shot and s.healthcheck()]
    while pending:
        for s in services:
            if not s.one_shot and s.proc.poll() is not None:
                raise Failure(f"{path}: {s.name} exited with status {s.proc.returncode}:\n{s.log_tail()}")
        pending = [s for s in pending if not s.healthy()]
        if pending and time.monotonic() > deadline:
            raise Failure(f"{path}: not healthy after {HEALTHY_DEADLINE_S} s: "
                          + ", ".join(s.name for s in pending) + "\n" + pending[0].log_tail())
        if pending:
            time.sleep(0.2)


def cli(port, *args, cluster=False):
    argv = ["redis-cli", "-h", "127.0.0.1", "-p", str(port)] + (["-c"] if cluster else []) + list(args)
    return subprocess.run(argv, check=True, stdout=subprocess.PIPE, text=True, timeout=5).stdout.split()


def check_addresses(path, services):
    """What a client is handed must be dialable from the host: loopback addresses of
    the processes in this file."""
    by_port = {int(s.env["PORT"]): s for s in services if "PORT" in s.env}
    for s in services:
        if "MASTER_NAME" in s.env:
            name, master = s.env["MASTER_NAME"], s.env["MASTER_PORT"]
            check(f"{path}: {s.name} names 127.0.0.1:{master} master of {name}",
                  cli(s.env["PORT"], "sentinel", "get-master-addr-by-name", name) == ["127.0.0.1", master])
            replicas = cli(s.env["PORT"], "--json", "sentinel", "replicas", name)
            addrs = sorted(f"{r['ip']}:{r['port']}" for r in json.loads(" ".join(replicas)))
            expected = sorted(f"127.0.0.1:{p}" for p, r in by_port.items()
                              if r.env.get("MASTER_PORT") == master and "MASTER_NAME" not in r.env)
            check(f"{path}: {s.name} knows the replicas {expected} of {name}, not {addrs}",
                  addrs == expected and len(addrs) == 2)
        elif s.cluster_server:
            port = int(s.env["PORT"])
            nodes = subprocess.run(["redis-cli", "-p", str(port), "cluster", "nodes"], check=True,
                                   stdout=subprocess.PIPE, text=True, timeout=5).stdout.splitlines()
            addrs = sorted(line.split()[1] for line in nodes)
            peers = next(c.env["SHARD_PORTS"].split() for c in services
                         if str(port) in c.env.get("SHARD_PORTS", "").split())
            expected = sorted(f"127.0.0.1:{p}@{int(p) + CLUSTER_BUS_OFFSET}" for p in peers)
            check(f"{path}: {s.name}'s cluster is {expected}, not {addrs}", addrs == expected)


def lock_round_trip(path, redlock, nodes):
    env = dict(os.environ, REDLOCK_NODES=nodes)
    env.pop("REDLOCK_SENTINEL_USERNAME", None)
    env.pop("REDLOCK_SENTINEL_PASSWORD", None)
    key = "compose:" + os.path.basename(path)
    members = len(re.findall(r"redis-(?:sentinel|cluster)://", nodes))
    check(f"{path}: the header's REDLOCK_NODES names five members", members == 5)
    # Every member must grant it: a member the header names wrongly, or one whose
    # servers hand out unreachable addresses, fails the acquire.
    # The fleet was started just now, on purpose: its young members count.
    acquired = subprocess.run([redlock, "--quorum", str(members), "--no-guard-young-members",
                               "acquire", "--json", key],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              timeout=30)
    check(f"{path}: redlock acquire on all five members: {acquired.stderr.strip()}",
          acquired.returncode == 0)
    value = json.loads(acquired.stdout)["value"]
    released = subprocess.run([redlock, "--quorum", str(members), "release", key, value], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=30)
    check(f"{path}: redlock release on all five members: {released.stderr.strip()}",
          released.returncode == 0)


def run_file(docker_compose, redlock, path, work):
    began = time.monotonic()
    nodes = header_nodes(path)
    services = load_services(docker_compose, path)
    require_free(path, services)
    try:
        start(services, work)
        wait_ready(path, services)
        check_addresses(path, services)
        lock_round_trip(path, redlock, nodes)
    finally:
        left = stop(services)
    check(f"{path}: every process stopped ({[s.proc.pid for s in left]} still run)", not left)
    servers = sum(1 for s in services if not s.one_shot)
    print(f"{os.path.basename(path)}: {servers} processes and "
          f"{len(services) - servers} one-shot services, locked and stopped in "
          f"{time.monotonic() - began:.1f} s")


def main():
    docker_compose, redlock, files = sys.argv[1], sys.argv[2], sys.argv[3:]
    for tool, package in ((docker_compose, "docker-compose"), ("redis-server", "redis-server"),
                          ("redis-cli", "redis-tools")):
        if not shutil.which(tool):
            raise Failure(f"{tool} not found (apt-get install {package}, or scripts/setup --profile test)")
    # ctest's timeout and ^C end the test through the finally blocks, which stop the
    # processes it started.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    work = tempfile.mkdtemp(prefix="compose-topologies.")
    try:
        for path in files:
            run_file(docker_compose, redlock, path, os.path.join(work, os.path.basename(path)))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"compose_topologies: {checks} checks passed")


if __name__ == "__main__":
    try:
        main()
    except Failure as e:
        print(f"FAILED: {e}", file=sys.stderr)
        sys.exit(1)
