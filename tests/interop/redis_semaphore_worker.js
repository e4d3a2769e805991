#!/usr/bin/env node
'use strict';
// A chaos worker (chaos/README.md, "Worker") whose permits come from npm
// `redis-semaphore`'s RedlockSemaphore instead of redlock::Client::acquire_permit, so that
// the chaos runner can run it in place of redlock-chaos-worker (`--worker`) under the
// same scenario, the same faults and the same safety checker:
//
//   NODE_PATH=build/bench-node/node_modules \
//     chaos/run --scenario split_views_permits --worker tests/interop/redis_semaphore_worker.js
//
// It takes the runner's command line and uses what a semaphore load needs: --nodes,
// --events, --id, --threads, --keys, --duration, --ttl, --wait, --hold, --prefix, --seed,
// --permits. The rest (--store, stalls, foreign clients, fencing, member guard, the
// test-only quorums) is accepted and ignored: permits carry no fencing token, and
// redis-semaphore's quorum is always a plain majority of the nodes, whatever K is.
// --primitive must be semaphore.
//
// Each thread is an async task with a RedlockSemaphore of its own (K = --permits, one
// of --keys keys, lockTimeout = --ttl, acquireTimeout = --wait, no refresh: holds are far
// shorter than the lockTimeout). It loops: tryAcquire(), an `attempt` record, the hold,
// a `hold` record of primitive "permit", release(). The hold's window, in CLOCK_MONOTONIC
// nanoseconds (process.hrtime, the clock every worker shares), is
//
//   [return of tryAcquire(), min(start of tryAcquire() + lockTimeout, start of release())]
//
// The start is when the library said yes, as for every holder the checker reads. The
// library keeps no validity of its own: each node scores the holder with the client's
// Date.now() at the start of the attempt that succeeded and drops it lockTimeout later,
// so the start of the call + lockTimeout is the earliest moment any node may forget the
// holder. The window is therefore never longer than the library's own promise (which
// neither subtracts the time the acquire took nor allows for drift).
//
// A tryAcquire() that returns false (no majority within acquireTimeout) is logged as a
// conflict: the library does not say whether the nodes were full or unreachable. A
// thrown error is logged as an error with its name.
//
// Nodes: redis://HOST:PORT, or unix://PATH (the runner names a node a worker must not
// reach by a socket path where nothing listens). Without an offline queue a command to
// a node that is not connected fails at once, as the C++ client's does.

const fs = require('fs');

function usage(why) {
  process.stderr.write(
    `redis_semaphore_worker.js: ${why}\nusage: redis_semaphore_worker.js --nodes URL,... ` +
      '--events FILE [--id NAME] [--threads N] [--keys N] [--duration D] [--ttl D] ' +
      '[--wait D] [--hold D] [--prefix P] [--seed N] [--permits K] [--primitive semaphore] ' +
      '(the other options of redlock-chaos-worker are accepted and ignored)\n',
  );
  process.exit(2);
}

function parseDuration(text, flag) {
  const match = /^(\d+)(ms|s|m)?$/.exec(text);
  if (!match) usage(`bad duration for ${flag}: ${text}`);
  const scale = { ms: 1, s: 1000, m: 60000 }[match[2] || 'ms'];
  return Number(match[1]) * scale;
}

function parseArgs(argv) {
  const c = {
    nodes: [],
    events: '',
    id: 'worker',
    threads: 4,
    keys: 2,
    duration: 10000,
    ttl: 1000,
    wait: 1000,
    hold: 20,
    prefix: 'chaos:',
    seed: 1,
    permits: 2,
  };
  const durations = { '--duration': 'duration', '--ttl': 'ttl', '--wait': 'wait', '--hold': 'hold' };
  const counts = { '--threads': 'threads', '--keys': 'keys', '--seed': 'seed', '--permits': 'permits' };
  const ignored = new Set([
    '--store', '--stall-every', '--stall', '--node-timeout', '--foreign-threads',
    '--unsafe-permit-quorum', '--unsafe-election-quorum', '--unfenced-every',
    '--member-guard', '--replicas-to-ack', '--allow-two-masters',
  ]);
  for (let i = 0; i < argv.length; i += 2) {
    const flag = argv[i];
    const value = argv[i + 1];
    if (value === undefined) usage(`missing value for ${flag}`);
    if (flag === '--nodes') c.nodes = value.split(',').filter(Boolean);
    else if (flag === '--events') c.events = value;
    else if (flag === '--id') c.id = value;
    else if (flag === '--prefix') c.prefix = value;
    // Its own plain majority only: a scenario that sets a quorum is not for this worker.
    else if (flag === '--quorum') {
      if (value !== '0') usage(`only --quorum 0 (a majority) is supported, got ${value}`);
    }
    else if (flag === '--primitive') {
      if (value !== 'semaphore') usage(`only --primitive semaphore is supported, got ${value}`);
    } else if (flag in durations) c[durations[flag]] = parseDuration(value, flag);
    else if (flag in counts) {
      if (!/^\d+$/.test(value)) usage(`bad number for ${flag}: ${value}`);
      c[counts[flag]] = Number(value);
    } else if (!ignored.has(flag)) usage(`unknown option ${flag}`);
  }
  if (c.nodes.length === 0 || !c.events) usage('--nodes and --events are required');
  if (c.threads < 1 || c.keys < 1 || c.permits < 1) {
    usage('--threads, --keys and --permits must be positive');
  }
  return c;
}

function loadModules() {
  try {
    return { Redis: require('ioredis'), RedlockSemaphore: require('redis-semaphore').RedlockSemaphore };
  } catch (error) {
    process.stderr.write(
      `redis_semaphore_worker.js: ${error.message}\nNODE_PATH must name the node_modules ` +
        'that scripts/setup installs from bench/node (build/bench-node/node_modules)\n',
    );
    process.exit(2);
  }
}

const monotonicNs = () => process.hrtime.bigint();
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// A small seeded generator (mulberry32), so that a worker's key choices repeat.
function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function connect(Redis, url) {
  const common = {
    enableOfflineQueue: false, // fail at once while a node is not connected
    maxRetriesPerRequest: 0,
    commandTimeout: 1000,
    retryStrategy: () => 200,
    lazyConnect: false,
  };
  const parsed = new URL(url);
  const client =
    parsed.protocol === 'unix:'
      ? new Redis({ ...common, path: parsed.pathname })
      : new Redis({ ...common, host: parsed.hostname, port: Number(parsed.port || 6379) });
  client.on('error', () => {}); // a node that is down is an expected state here
  return client;
}

async function main() {
  const config = parseArgs(process.argv.slice(2));
  const { Redis, RedlockSemaphore } = loadModules();
  const events = fs.openSync(config.events, 'a'); // O_APPEND: one write per record
  // Timestamps are BigInts, written as exact JSON integers.
  const log = (record) =>
    fs.writeSync(
      events,
      `${JSON.stringify(record, (_, v) => (typeof v === 'bigint' ? `#${v}#` : v)).replace(/"#(\d+)#"/g, '$1')}\n`,
    );
  const clients = config.nodes.map((url) => connect(Redis, url));
  let stopping = false;
  process.on('SIGTERM', () => {
    stopping = true;
  });
  // The first acquire would otherwise meet connections still being made.
  await Promise.race([
    Promise.all(clients.map((c) => new Promise((resolve) => (c.status === 'ready' ? resolve() : c.once('ready', resolve))))),
    sleep(500),
  ]);

  const deadline = Date.now() + config.duration;
  const counts = { acquired: 0, refused: 0, errors: 0 };
  const thread = async (index) => {
    const name = `${config.id}.${index}`;
    const draw = random(config.seed * 7919 + index);
    while (!stopping && Date.now() < deadline) {
      const key = `${config.prefix}sem:${Math.floor(draw() * config.keys)}`;
      const semaphore = new RedlockSemaphore(clients, key, config.permits, {
        lockTimeout: config.ttl,
        acquireTimeout: config.wait,
        retryInterval: 10,
        refreshInterval: 0,
      });
      const called = monotonicNs();
      let acquired;
      try {
        acquired = await semaphore.tryAcquire();
      } catch (error) {
        counts.errors++;
        log({ type: 'attempt', key, client: name, result: 'error', code: error.name || 'error',
              at_ns: monotonicNs(), primitive: 'permit' });
        await sleep(20);
        continue;
      }
      const at = monotonicNs();
      if (!acquired) {
        counts.refused++;
        log({ type: 'attempt', key, client: name, result: 'conflict', at_ns: at, primitive: 'permit' });
        continue;
      }
      counts.acquired++;
      log({ type: 'attempt', key, client: name, result: 'acquired', at_ns: at, primitive: 'permit' });
      await sleep(config.hold);
      const released = monotonicNs();
      const validUntil = called + BigInt(config.ttl) * 1000000n;
      log({
        type: 'hold',
        key,
        client: name,
        value: semaphore.identifier,
        start_ns: at,
        end_ns: released < validUntil ? released : validUntil,
        primitive: 'permit',
        permits: config.permits,
      });
      try {
        await semaphore.release();
      } catch (error) {
        // A release that fails leaves the permit to its lockTimeout; the window ended above.
      }
    }
  };
  await Promise.all(Array.from({ length: config.threads }, (_, i) => thread(i)));
  process.stdout.write(
    `${config.id}: ${counts.acquired} permits, ${counts.refused} refused, ${counts.errors} errors\n`,
  );
  await Promise.all(clients.map((c) => c.quit().catch(() => c.disconnect())));
  fs.closeSync(events);
}

main().catch((error) => {
  process.stderr.write(`redis_semaphore_worker.js: ${error.stack || error}\n`);
  process.exit(1);
});
