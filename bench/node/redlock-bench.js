#!/usr/bin/env node
'use strict';
// The redlock-bench workload with the npm `redlock` package (node-redlock v5) over
// ioredis, so the two clients can be run on the same nodes side by side. Same flags
// and the same redlock-bench/v1 JSON line as redlock-bench; run with --help for them.
//
// Workers are async functions in this one process sharing one ioredis connection per
// node, which is how node-redlock is used. Each loops acquire -> release. Waiting for a
// held lock (--wait) is node-redlock's own: retries every retryDelay +/- retryJitter.

const os = require('os');
const crypto = require('crypto');
const fs = require('fs');
const path = require('path');
const { performance } = require('perf_hooks');

const DEFAULT_NODES = '127.0.0.1:7101,127.0.0.1:7102,127.0.0.1:7103,127.0.0.1:7104,127.0.0.1:7105';
// node-redlock's defaults; --wait is turned into a retry count with them.
const RETRY_DELAY_MS = 200;
const RETRY_JITTER_MS = 100;

const FLAGS = {
  nodes: ['comma-separated URLs or host:port pairs ($REDLOCK_NODES, else 7101..7105)', 'string'],
  mode: ['distinct (a key per worker) | hot (one key for all)', 'string'],
  workers: ['concurrent async workers', 'number'],
  duration: ['measured seconds', 'number'],
  warmup: ['unmeasured seconds before the window', 'number'],
  ops: ['instead of --duration: start N attempts in the window, wait for all', 'number'],
  cycles: ['same as --ops', 'number'],
  ttl: ['lock TTL, ms', 'number'],
  wait: ['keep retrying a held lock for this long, ms (0 = one attempt)', 'number'],
  'retry-count': ['node-redlock retryCount (overrides the one derived from --wait)', 'number'],
  'node-timeout': ['ioredis commandTimeout, ms (0 = none, the ioredis default)', 'number'],
  'command-timeout': ['alias of --node-timeout', 'number'],
  'op-timeout': ['give up waiting for one acquire/release after this, ms (counted as a failure)', 'number'],
  pause: ['SIGSTOP the first K nodes after the warm-up, SIGCONT at the end', 'number'],
  stall: ['SIGSTOP this process for MS in the middle of the window (a client pause)', 'number'],
  pids: ['comma-separated node pids (default: INFO server process_id of each node)', 'string'],
  'auto-pipeline': ['1 = ioredis enableAutoPipelining', 'number'],
  label: ['copied into the output', 'string'],
  run: ['run index, copied into the output', 'number'],
  lib: ['ignored (harness contract)', 'string'],
};

function parseArgs(argv) {
  const o = {
    nodes: process.env.REDLOCK_NODES || DEFAULT_NODES, mode: 'distinct', workers: 1, duration: 5,
    warmup: 1, ops: 0, cycles: 0, ttl: 10000, wait: 0, 'retry-count': -1, 'node-timeout': 0,
    'command-timeout': 0, 'op-timeout': 10000, pause: 0, stall: 0, pids: '', 'auto-pipeline': 0, label: '',
    run: 0, lib: 'redlock',
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '-h' || arg === '--help') {
      const lines = Object.entries(FLAGS).map(([k, [text]]) => `  --${k.padEnd(16)} ${text} [${o[k]}]`);
      process.stdout.write(`usage: redlock-bench.js [flags]\n${lines.join('\n')}\n`);
      process.exit(0);
    }
    const match = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
    if (!match || !(match[1] in FLAGS)) usage(`unknown argument ${arg}`);
    const name = match[1];
    const text = match[2] !== undefined ? match[2] : argv[++i];
    if (text === undefined) usage(`--${name} needs a value`);
    if (FLAGS[name][1] === 'number') {
      const value = Number(text);
      if (!Number.isFinite(value) || value < 0) usage(`--${name}: not a non-negative number: ${text}`);
      o[name] = value;
    } else {
      o[name] = text;
    }
  }
  if (!['distinct', 'hot'].includes(o.mode)) usage('--mode: distinct or hot');
  if (o.workers < 1) usage('--workers: at least 1');
  o.ops = o.ops || o.cycles;
  o.nodeTimeout = o['node-timeout'] || o['command-timeout'];
  o.retryCount = o['retry-count'] >= 0 ? o['retry-count'] : Math.ceil(o.wait / RETRY_DELAY_MS);
  o.nodeList = o.nodes.split(',').map((s) => s.trim()).filter(Boolean).map(parseNode);
  if (o.pause > o.nodeList.length) usage(`--pause ${o.pause}: only ${o.nodeList.length} nodes`);
  o.pidList = o.pids ? o.pids.split(',').map(Number) : [];
  return o;
}

function usage(message) {
  process.stderr.write(`redlock-bench.js: ${message} (try --help)\n`);
  process.exit(2);
}

function parseNode(text) {
  const url = new URL(text.includes('://') ? text : `redis://${text}`);
  return {
    host: url.hostname.replace(/^\[|\]$/g, ''), port: Number(url.port || 6379),
    username: decodeURIComponent(url.username) || undefined, password: decodeURIComponent(url.password) || undefined,
  };
}

// Nearest-rank percentiles over every sample, ms with 3 decimals: the schema's summary.
function summarize(samples) {
  if (samples.length === 0) return { n: 0, p50: null, p90: null, p99: null, max: null, mean: null };
  const sorted = Float64Array.from(samples).sort();
  const r3 = (x) => Math.round(x * 1000) / 1000;
  const rank = (p) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))];
  let sum = 0;
  for (const x of sorted) sum += x;
  return {
    n: sorted.length, p50: r3(rank(0.5)), p90: r3(rank(0.9)), p99: r3(rank(0.99)),
    max: r3(sorted[sorted.length - 1]), mean: r3(sum / sorted.length),
  };
}

// The installed version of a package; redlock 5's "exports" hides its package.json from require.
function packageVersion(name) {
  for (const base of require.resolve.paths(name) || []) {
    const file = path.join(base, name, 'package.json');
    if (fs.existsSync(file)) return JSON.parse(fs.readFileSync(file, 'utf8')).version;
  }
  return 'unknown';
}

function parseInfo(text) {
  const fields = {};
  for (const line of text.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) fields[line.slice(0, colon)] = line.slice(colon + 1);
  }
  return fields;
}

// Cumulative counters of all nodes, from side connections that the workload never uses.
async function nodeCounters(admins) {
  const total = { cpuUs: 0, commands: 0, reads: 0, connections: 0 };
  for (const admin of admins) {
    const cpu = parseInfo(await admin.info('cpu'));
    const stats = parseInfo(await admin.info('stats'));
    total.cpuUs += (Number(cpu.used_cpu_user) + Number(cpu.used_cpu_sys)) * 1e6;
    total.commands += Number(stats.total_commands_processed);
    total.reads += Number(stats.total_reads_processed);
    total.connections += Number(stats.total_connections_received);
  }
  return total;
}

// min and max cycles of one worker, and Jain's fairness index (1 = equal shares,
// 1/W = one worker got everything).
function workerShare(cycles) {
  let sum = 0; let squares = 0;
  for (const c of cycles) { sum += c; squares += c * c; }
  return {
    min: Math.min(...cycles), max: Math.max(...cycles),
    fairness: squares ? Math.round((sum * sum / (cycles.length * squares)) * 1000) / 1000 : null,
  };
}

const TIMED_OUT = Symbol('timed out');
function within(promise, ms) {
  if (!ms) return promise;
  let timer;
  const limit = new Promise((resolve) => { timer = setTimeout(() => resolve(TIMED_OUT), ms); });
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}
// A helper process stops this one (every thread) and resumes it `ms` later: a client
// pause while the nodes keep answering.
function stallThisProcess(ms) {
  const { spawn } = require('child_process');
  spawn('sh', ['-c', `kill -STOP ${process.pid}; sleep ${ms / 1000}; kill -CONT ${process.pid}`],
    { stdio: 'ignore', detached: true }).unref();
}
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const Redis = require('ioredis');
  const redlockModule = require('redlock');
  const Redlock = redlockModule.default || redlockModule;

  const connect = (node, extra) => new Redis({
    host: node.host, port: node.port, username: node.username, password: node.password,
    lazyConnect: true, enableAutoPipelining: o['auto-pipeline'] > 0,
    commandTimeout: o.nodeTimeout > 0 ? o.nodeTimeout : undefined, ...extra,
  });
  const clients = o.nodeList.map((node) => connect(node, {}));
  const admins = o.nodeList.map((node) => connect(node, { enableAutoPipelining: false, commandTimeout: 2000 }));
  for (const c of [...clients, ...admins]) c.on('error', () => {});
  await Promise.all([...clients, ...admins].map((c) => c.connect()));
  const pids = o.pidList.length ? o.pidList
    : await Promise.all(admins.map(async (a) => Number(parseInfo(await a.info('server')).process_id)));

  const redlock = new Redlock(clients, {
    retryCount: o.retryCount, retryDelay: RETRY_DELAY_MS, retryJitter: RETRY_JITTER_MS, driftFactor: 0.01,
  });
  redlock.on('error', () => {}); // a minority of nodes refusing is an expected event, not a failure

  const runId = crypto.randomBytes(4).toString('hex');
  const keys = Array.from({ length: o.workers }, (_, w) => (o.mode === 'hot' ? `bench:${runId}:hot` : `bench:${runId}:w${w}`));

  let phase = 'warmup';
  let started = 0;
  const t = {
    attempts: 0, cycles: 0, failures: 0, acquireTimeouts: 0, releaseFailures: 0, releaseTimeouts: 0,
    acquireOk: [], acquireFail: [], release: [], cycle: [], kinds: {},
    byWorker: new Array(o.workers).fill(0),
  };
  const kind = (name) => { t.kinds[name] = (t.kinds[name] || 0) + 1; };
  const busySince = new Array(o.workers).fill(0);

  async function worker(w) {
    const key = keys[w];
    for (;;) {
      if (phase === 'over') return;
      if (phase === 'measuring' && o.ops) { if (started >= o.ops) return; started++; }
      const t0 = performance.now();
      busySince[w] = t0;
      let lock;
      try {
        lock = await within(redlock.acquire([key], o.ttl), o['op-timeout']);
      } catch (e) {
        busySince[w] = 0;
        if (phase === 'measuring') { t.attempts++; t.failures++; t.acquireFail.push(performance.now() - t0); kind(e.name || 'Error'); }
        continue;
      }
      const t1 = performance.now();
      if (lock === TIMED_OUT) {
        busySince[w] = 0;
        if (phase === 'measuring') { t.attempts++; t.failures++; t.acquireTimeouts++; t.acquireFail.push(t1 - t0); kind('HarnessTimeout'); }
        continue;
      }
      let released; let releaseError = null;
      try { released = await within(lock.release(), o['op-timeout']); } catch (e) { releaseError = e; }
      const t2 = performance.now();
      busySince[w] = 0;
      if (phase === 'measuring') {
        t.attempts++; t.cycles++; t.byWorker[w]++;
        t.acquireOk.push(t1 - t0); t.release.push(t2 - t1); t.cycle.push(t2 - t0);
        if (releaseError) { t.releaseFailures++; kind(`release:${releaseError.name || 'Error'}`); }
        if (released === TIMED_OUT) { t.releaseFailures++; t.releaseTimeouts++; kind('release:HarnessTimeout'); }
      }
    }
  }

  const paused = [];
  const resume = () => { for (const pid of paused.splice(0)) { try { process.kill(pid, 'SIGCONT'); } catch (_) { /* gone */ } } };
  process.on('exit', resume);
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => { resume(); process.exit(130); });

  const workers = keys.map((_, w) => worker(w));
  await sleep(o.warmup * 1000);
  for (const pid of pids.slice(0, o.pause)) { process.kill(pid, 'SIGSTOP'); paused.push(pid); }

  // Paused nodes cannot answer INFO; the others still show their reconnections.
  const counted = admins.slice(o.pause);
  const counters0 = await nodeCounters(counted);
  const rss0 = process.memoryUsage().rss;
  const usage0 = process.resourceUsage();
  const wall0 = performance.now();
  phase = 'measuring';
  if (o.ops) {
    while (t.attempts < o.ops && performance.now() - wall0 < 600000) await sleep(1);
  } else if (o.stall > 0) {
    await sleep((o.duration * 1000) / 2);
    stallThisProcess(o.stall);
    await sleep((o.duration * 1000) / 2);
  } else {
    await sleep(o.duration * 1000);
  }
  phase = 'over';
  const wall1 = performance.now();
  const usage1 = process.resourceUsage();
  const rss1 = process.memoryUsage().rss;
  const blockedFor = o.wait + 2 * (o.nodeTimeout || 0) + 1000;
  const inFlightAtEnd = busySince.filter((since) => since !== 0 && since < wall1 - blockedFor).length;
  const counters1 = await nodeCounters(counted);
  resume();
  await Promise.race([Promise.allSettled(workers), sleep(Math.max(1000, o['op-timeout'] + 500))]);

  const elapsed = (wall1 - wall0) / 1000;
  const userUs = usage1.userCPUTime - usage0.userCPUTime;
  const systemUs = usage1.systemCPUTime - usage0.systemCPUTime;
  const r1 = (x) => Math.round(x * 10) / 10;
  const per = (x, n) => (n ? r1(x / n) : null);
  const delta = {
    cpuUs: counters1.cpuUs - counters0.cpuUs, commands: counters1.commands - counters0.commands,
    reads: counters1.reads - counters0.reads, connections: counters1.connections - counters0.connections,
  };
  // Per-cycle server costs only when every node is counted, as in the shared schema.
  const redis = o.pause ? null : delta;
  const out = {
    schema: 'redlock-bench/v1',
    bench: 'redlock-bench.js',
    lib: o['auto-pipeline'] > 0 ? 'redlock +autopipeline' : 'redlock',
    lib_version: packageVersion('redlock'),
    runtime: `node ${process.version}`,
    driver: `ioredis ${packageVersion('ioredis')}`,
    label: o.label, run: o.run,
    mode: o.mode, workers: o.workers, nodes: o.nodeList.length, quorum: Math.floor(o.nodeList.length / 2) + 1,
    paused_nodes: o.pause, client_stall_ms: o.stall, ttl_ms: o.ttl, retry_count: o.retryCount, wait_ms: o.wait,
    command_timeout_ms: o.nodeTimeout || null, node_timeout_ms: o.nodeTimeout || null,
    op_timeout_ms: o['op-timeout'] || null, auto_pipeline: o['auto-pipeline'] > 0,
    elapsed_s: Math.round(elapsed * 1000) / 1000,
    attempts: t.attempts, cycles: t.cycles, failures: t.failures, acquire_timeouts: t.acquireTimeouts,
    release_failures: t.releaseFailures, release_timeouts: t.releaseTimeouts, in_flight_at_end: inFlightAtEnd,
    error_kinds: t.kinds,
    cycles_per_worker: workerShare(t.byWorker),
    ops_per_s: r1(t.cycles / elapsed),
    attempts_per_s: r1(t.attempts / elapsed),
    acquire_ms: summarize(t.acquireOk),
    acquire_fail_ms: summarize(t.acquireFail),
    release_ms: summarize(t.release),
    cycle_ms: summarize(t.cycle),
    cpu_us_per_cycle: { user: per(userUs, t.cycles), system: per(systemUs, t.cycles), total: per(userUs + systemUs, t.cycles) },
    cpu_us_per_attempt: { total: per(userUs + systemUs, t.attempts) },
    client_cpu_util: Math.round(((userUs + systemUs) / 1e6 / elapsed) * 1000) / 1000,
    client_ctx_switches_per_cycle: {
      voluntary: per(usage1.voluntaryContextSwitches - usage0.voluntaryContextSwitches, t.cycles),
      involuntary: per(usage1.involuntaryContextSwitches - usage0.involuntaryContextSwitches, t.cycles),
    },
    client_rss_mb: r1(rss1 / 1048576),
    client_rss_growth_mb: r1((rss1 - rss0) / 1048576),
    redis_cpu_us_per_cycle: redis ? per(redis.cpuUs, t.cycles) : null,
    redis_cpu_us_per_attempt: redis ? per(redis.cpuUs, t.attempts) : null,
    redis_commands_per_cycle: redis ? per(redis.commands, t.cycles) : null,
    redis_reads_per_cycle: redis ? per(redis.reads, t.cycles) : null,
    redis_reconnects: delta.connections,
    host: { cpus: os.cpus().length, loadavg_1m: Math.round(os.loadavg()[0] * 100) / 100, kernel: os.release() },
    ts: new Date().toISOString(),
  };
  process.stdout.write(`${JSON.stringify(out)}\n`);
  // Remove the run's keys, and leave without waiting for commands still queued towards
  // a node that was stopped.
  try { await within(Promise.all(admins.map((a) => a.del(...new Set(keys)))), 2000); } catch (_) { /* best effort */ }
  for (const c of [...clients, ...admins]) c.disconnect();
  process.exit(0);
}

main().catch((e) => {
  process.stderr.write(`redlock-bench.js: ${(e && e.stack) || e}\n`);
  process.exit(1);
});
