"""What the network namespace tests share: the skip rules, commands that must succeed,
and namespaces that are removed with every process inside them whatever ends the test.

A test makes its namespaces through a Namespaces object and calls close() in a finally;
guard_signals() turns SIGINT and SIGTERM (an interrupt, a kill) into a Failure, so that
they end the test through that finally too. CTest's timeout sends SIGKILL, which no
finally survives: a guardian process, started with the first namespace, waits for the
test process to end however it ends and removes whatever it left.
"""

import os
import shutil
import signal
import subprocess
import sys

SKIP = 77


class Failure(Exception):
    pass


def skip(why):
    print(f"SKIP: {why}", flush=True)
    sys.exit(SKIP)


def run(*argv, check=True):
    done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if check and done.returncode != 0:
        raise Failure(f"{' '.join(argv)} exited {done.returncode}: {done.stderr.strip()}")
    return done


def require_namespaces():
    """Exits 77, saying why, where these tests cannot run."""
    if os.geteuid() != 0:
        skip("network namespaces need root (run as root to test partitions)")
    if not shutil.which("ip"):
        skip("the ip command (iproute2) is missing")
    if not shutil.which("redis-server"):
        skip("redis-server is missing")
    probe = f"rlnetns{os.getpid()}-probe"
    made = run("ip", "netns", "add", probe, check=False)
    if made.returncode != 0:
        skip(f"`ip netns add` fails here: {made.stderr.strip()}")
    run("ip", "netns", "del", probe, check=False)


def skip_if_unsupported(error):
    """A kernel without veth pairs or bridges is a place the test cannot run, not a bug."""
    if "Operation not supported" in str(error) or "not permitted" in str(error):
        skip(f"veth pairs or bridges are not available here: {error}")


def guard_signals():
    def interrupted(signo, frame):
        raise Failure(f"interrupted by signal {signo}")
    signal.signal(signal.SIGTERM, interrupted)
    signal.signal(signal.SIGINT, interrupted)


def ignore_signals():
    """A second interrupt must not cut the cleanup short and leave namespaces behind."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


# Reads its stdin, whose other end only the test process holds, until the end of file
# the kernel gives when that process is gone; then kills every process inside the
# namespaces named PREFIX-* and deletes them. In a session of its own, so that an
# interrupt of the test's process group leaves it to do this.
GUARDIAN = r"""
import os, signal, subprocess, sys
signal.signal(signal.SIGINT, signal.SIG_IGN)
prefix = sys.argv[1] + "-"
sys.stdin.buffer.read()
listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
names = [line.split()[0] for line in listed.splitlines() if line.startswith(prefix)]
for name in names:
    pids = subprocess.run(["ip", "netns", "pids", name], capture_output=True, text=True).stdout
    for pid in pids.split():
        try:
            os.kill(int(pid), signal.SIGKILL)
        except (ProcessLookupError, ValueError):
            pass
for name in names:
    subprocess.run(["ip", "netns", "del", name], capture_output=True)
if names:
    print(f"removed the namespaces left behind: {names}", file=sys.stderr)
"""


class Namespaces:
    """Namespaces named PREFIX-NAME, the prefix unique to this process."""

    def __init__(self, tag="rlnetns"):
        self.prefix = f"{tag}{os.getpid()}"
        self.made = []
        self.guardian = None

    def ns(self, name):
        return f"{self.prefix}-{name}"

    def add(self, name):
        if self.guardian is None:
            self.guardian = subprocess.Popen([sys.executable, "-c", GUARDIAN, self.prefix],
                                             stdin=subprocess.PIPE, start_new_session=True)
        run("ip", "netns", "add", self.ns(name))
        self.made.append(self.ns(name))
        run("ip", "-n", self.ns(name), "link", "set", "lo", "up")

    def exec_argv(self, name, *argv):
        return ["ip", "netns", "exec", self.ns(name), *argv]

    def close(self, processes=()):
        """Kills every process inside the namespaces (all of them ours: what we started
        there and what those started), then deletes the namespaces, which takes their
        links with them. True when nothing was left behind."""
        ignore_signals()
        for name in self.made:
            for pid in run("ip", "netns", "pids", name, check=False).stdout.split():
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except (ProcessLookupError, ValueError):
                    pass
        for process in processes:
            if process.poll() is None:
                process.kill()
            process.wait()
        left = []
        for name in reversed(self.made):
            if run("ip", "netns", "del", name, check=False).returncode != 0:
                left.append(name)
        if left:
            print(f"could not delete the namespaces {left}", file=sys.stderr)
        self.made = left
        if self.guardian is not None:
            self.guardian.stdin.close()
            self.guardian.wait()
            self.guardian = None
        return not left
