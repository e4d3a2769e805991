#!/usr/bin/env node
'use strict';
// The Markdown report of bench/compare: medians per workload and client (each metric's
// median over the runs, independently), the raw Redis limit of the same run, every row
// as a ratio to the limit of a cycle (redlock-fanout-limit) and to node-redlock, and
// every performance target as a ratio with its verdict.
//
//   node bench/compare-report.js raw.jsonl results.jsonl

const fs = require('fs');

const lines = process.argv.slice(2).flatMap((file) => fs.readFileSync(file, 'utf8').split('\n'));
const rows = [];
for (const line of lines) {
  if (!line.trim().startsWith('{')) continue;
  try { rows.push(JSON.parse(line)); } catch (_) { /* not a result line */ }
}
// A limit run whose cycles did not all lock and unlock measured nothing (it exits non-zero
// and says so); it must not become the yardstick.
const usable = (r) => r.bench !== 'redlock-fanout-limit' || r.granted_reply_ratio >= 0.99;
rows.splice(0, rows.length, ...rows.filter(usable));

const median = (values) => {
  const v = values.filter((x) => typeof x === 'number' && Number.isFinite(x)).sort((a, b) => a - b);
  if (!v.length) return null;
  const m = v.length >> 1;
  return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
};
const worst = (values) => {
  const v = values.filter((x) => typeof x === 'number' && Number.isFinite(x));
  return v.length ? Math.max(...v) : null;
};
const get = (o, path) => path.split('.').reduce((a, k) => (a == null ? a : a[k]), o);
const fmt = (x, digits = 1) => (x == null ? '–' : Number(x).toFixed(digits).replace(/\.0+$/, ''));
const ratio = (a, b) => (a == null || b == null || b === 0 ? null : a / b);

const SIDES = { ours: 'redlock-bench', node: 'redlock-bench.js', limit: 'redlock-fanout-limit' };
const runsOf = (label, side) => rows.filter((r) => r.label === label && r.bench === SIDES[side]);
const med = (label, side, path) => median(runsOf(label, side).map((r) => get(r, path)));
const max = (label, side, path) => worst(runsOf(label, side).map((r) => get(r, path)));
const raw = (test, pipeline, field) => median(rows.filter((r) => r.bench === 'redis-benchmark' &&
  r.test === test && r.pipeline === pipeline).map((r) => r[field]));

const out = [];
const runs = Math.max(0, ...rows.filter((r) => r.run).map((r) => r.run));
out.push(`# redlock-bench vs node-redlock and the limit (medians of ${runs} runs, ${rows.find((r) => r.host)?.host.cpus ?? '?'} cores)`);
out.push('');

// --- the raw limit ---------------------------------------------------------------------
const ping = raw('ping', 1, 'p50_ms');
out.push('## Raw Redis limit (redis-benchmark, one node)');
out.push('');
out.push('| test | -c | -P | ops/s | p50 ms |');
out.push('|---|---|---|---|---|');
out.push(`| PING (loopback round trip) | 1 | 1 | ${fmt(raw('ping', 1, 'rps'), 0)} | ${fmt(ping, 3)} |`);
out.push(`| SET key NX PX 10000 | 50 | 1 | ${fmt(raw('set_nx_px', 1, 'rps'), 0)} | ${fmt(raw('set_nx_px', 1, 'p50_ms'), 3)} |`);
out.push(`| SET key NX PX 10000 | 50 | 16 | ${fmt(raw('set_nx_px', 16, 'rps'), 0)} | ${fmt(raw('set_nx_px', 16, 'p50_ms'), 3)} |`);
out.push('');
const setRps = raw('set_nx_px', 16, 'rps');
if (setRps) {
  out.push(`A cycle is 10 commands over 5 nodes; at the pipelined SET rate of one node on this box ` +
    `that bounds a cycle rate near ${fmt(setRps / 10, 0)}/s if nothing else ran on the cores.`);
  out.push('');
}

// --- every workload --------------------------------------------------------------------
out.push('## Workloads');
out.push('');
out.push('| workload | client | cycles/s | attempts/s | acquire p50 / p99 ms | failure p50 / max ms | release p50 ms | ' +
  'client CPU µs/cycle | Redis CPU µs/cycle | Redis cmds / reads per cycle | ctx switches/cycle | RSS growth MB | fairness | reconnects |');
out.push('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
const labels = [...new Set(rows.filter((r) => r.label).map((r) => r.label))];
for (const label of labels) {
  for (const side of ['ours', 'node', 'limit']) {
    const rs = runsOf(label, side);
    if (!rs.length) continue;
    const m = (path) => med(label, side, path);
    const extra = [];
    if (rs[0].node_timeout_ms) extra.push(`node timeout ${rs[0].node_timeout_ms} ms`);
    if (rs[0].wait_ms) extra.push(`retryCount ${rs[0].retry_count}`);
    const client = `${rs[0].lib}${side === 'node' && extra.length ? ` (${extra.join(', ')})` : ''}`;
    out.push(`| ${label} | ${client} | ${fmt(m('ops_per_s'), 0)} | ${fmt(m('attempts_per_s'), 0)} | ` +
      `${fmt(m('acquire_ms.p50'), 3)} / ${fmt(m('acquire_ms.p99'), 2)} | ` +
      `${fmt(m('acquire_fail_ms.p50'), 2)} / ${fmt(max(label, side, 'acquire_fail_ms.max'), 2)} | ` +
      `${fmt(m('release_ms.p50'), 3)} | ${fmt(m('cpu_us_per_cycle.total'))} | ${fmt(m('redis_cpu_us_per_cycle'))} | ` +
      `${fmt(m('redis_commands_per_cycle'))} / ${fmt(m('redis_reads_per_cycle'), 2)} | ` +
      `${fmt(m('client_ctx_switches_per_cycle.voluntary'))} | ${fmt(m('client_rss_growth_mb'))} | ` +
      `${fmt(m('cycles_per_worker.fairness'), 2)} | ${fmt(m('redis_reconnects'), 0)} |`);
  }
}
out.push('');
out.push('"failure max" is the worst run. "fairness" is Jain\'s index of the cycles per worker (1 = equal ' +
  'shares). "reconnects": connections the (unpaused) nodes accepted inside the window, i.e. reconnections after ' +
  'dropped connections. async rows: redlock-bench drives lock_async() chains, each awaiting its unlock_async() ' +
  'before the next attempt; node-redlock runs with ioredis auto-pipelining.');
out.push('');

// --- every row against the limit and node-redlock --------------------------------------
// The limit is the least work a cycle can cost on these nodes, measured for distinct keys
// on healthy nodes with as many cycles in lockstep as the row has workers; a hot-key or
// paused-node row has no such limit. The node-redlock row is the same workload's, or,
// for a variant only we run (-async, -t1000), that of the workload it varies.
const limitOf = (workers, path) => median(rows.filter((r) => r.bench === SIDES.limit && r.workers === workers)
  .map((r) => get(r, path)));
const nodeLabel = (label) => (runsOf(label, 'node').length ? label : label.replace(/-(async|t\d+)$/, ''));
out.push('## Every row against the limit and node-redlock');
out.push('');
out.push('| workload | client | cycles/s | × limit | × node-redlock | acquire p50 ms | × limit | × node-redlock | ' +
  'client CPU µs/cycle | × limit | × node-redlock | Redis CPU µs/cycle | × limit | × node-redlock |');
out.push('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
const METRICS = [['ops_per_s', 0], ['acquire_ms.p50', 3], ['cpu_us_per_cycle.total', 1], ['redis_cpu_us_per_cycle', 1]];
for (const label of labels) {
  for (const side of ['ours', 'node', 'limit']) {
    const rs = runsOf(label, side);
    if (!rs.length) continue;
    const bounded = rs[0].mode === 'distinct' && !rs[0].paused_nodes;
    const cells = [label, rs[0].lib];
    for (const [path, digits] of METRICS) {
      const value = med(label, side, path);
      const limit = bounded && side !== 'limit' ? limitOf(rs[0].workers, path) : null;
      const theirs = side === 'ours' ? med(nodeLabel(label), 'node', path) : null;
      cells.push(fmt(value, digits), fmt(ratio(value, limit), 2), fmt(ratio(value, theirs), 2));
    }
    out.push(`| ${cells.join(' | ')} |`);
  }
}
out.push('');
out.push('× limit: the row\'s median over that of redlock-fanout-limit with as many cycles in lockstep as the row has ' +
  'workers, in the same run (distinct keys, healthy nodes only). × node-redlock: over the same workload\'s ' +
  'node-redlock row (auto-pipelined for the -async rows). Above 1 is more cycles/s, or more time or CPU.');
out.push('');

// --- the synchronous API's handoff ----------------------------------------------------
// redlock-handoff-bench's rows: what Client::lock() and Lock::unlock() pay to reach the
// loop thread and hear back, with no I/O, so a floor under the threads driver's client
// CPU per cycle (two handoffs). Grouped by threads, whatever the label.
const handoffs = rows.filter((r) => r.bench === 'redlock-handoff-bench');
if (handoffs.length) {
  const limitCycle = med('distinct-128', 'limit', 'cpu_us_per_cycle.total');
  const hmed = (workers, path) => median(handoffs.filter((r) => r.workers === workers).map((r) => get(r, path)));
  out.push('## The synchronous API\'s handoff (no I/O)');
  out.push('');
  out.push('| workers | handoffs/s | CPU µs/handoff | CPU µs/cycle (2 handoffs) | ctx switches/cycle | × limit client CPU/cycle (B = 128) |');
  out.push('|---|---|---|---|---|---|');
  for (const workers of [...new Set(handoffs.map((r) => r.workers))].sort((a, b) => a - b)) {
    const cycle = hmed(workers, 'cpu_us_per_cycle.total');
    out.push(`| ${workers} | ${fmt(hmed(workers, 'ops_per_s'), 0)} | ${fmt(hmed(workers, 'cpu_us_per_handoff.total'), 2)} | ` +
      `${fmt(cycle)} | ${fmt(hmed(workers, 'client_ctx_switches_per_cycle.voluntary'))} | ${fmt(ratio(cycle, limitCycle), 2)} |`);
  }
  out.push('');
  out.push('W threads each post an empty task to the library\'s LoopThread and wait on a semaphore the task posts, ' +
    'as every synchronous call does; a lock+unlock cycle is two such handoffs. CPU is the whole process\'s ' +
    '(callers and loop thread). × limit: the cycle\'s cost over the client CPU per cycle of redlock-fanout-limit ' +
    `with 128 cycles in lockstep in the same run (${limitCycle == null ? 'not run here' : `${fmt(limitCycle)} µs`}); ` +
    'the threads driver\'s target at 128 workers is ≤ 5 × that, I/O included.');
  out.push('');
}

// --- targets ---------------------------------------------------------------------------
out.push('## Targets');
out.push('');
out.push('| target | ours | compared with | ratio | required | met |');
out.push('|---|---|---|---|---|---|');
const verdict = (value, ok) => (value == null ? '–' : ok ? 'yes' : '**no**');
const target = (name, ours, theirs, theirsText, r, required, ok) => {
  out.push(`| ${name} | ${ours} | ${theirsText} | ${r == null ? '–' : fmt(r, 2)} | ${required} | ${verdict(r, ok)} |`);
};

{
  // Short-lived clients on one key (bench/short-lived): the paused row against the
  // healthy one of the same runs, and no run may fail.
  const healthy = med('short-lived-8', 'ours', 'ops_per_s');
  const paused = med('short-lived-8-pause1', 'ours', 'ops_per_s');
  if (healthy != null && paused != null) {
    const r = ratio(paused, healthy);
    target('8 short-lived clients on one key, a node paused, vs healthy', `${fmt(paused, 0)}/s`, healthy,
      `${fmt(healthy, 0)}/s`, r, '≥ 0.5', r >= 0.5);
    const failed = worst(runsOf('short-lived-8-pause1', 'ours').map((row) => row.failed_runs));
    target('8 short-lived clients on one key, a node paused: failed runs (worst run)', `${failed}`, 0, '0',
      failed, '0', failed === 0);
  }
}

{
  const ours = med('distinct-1', 'ours', 'acquire_ms.p50');
  const theirs = med('distinct-1', 'node', 'acquire_ms.p50');
  const r1 = ratio(ours, theirs);
  target('1 worker: acquire p50 vs node-redlock', `${fmt(ours, 3)} ms`, theirs, `${fmt(theirs, 3)} ms`, r1, '≤ 0.6', r1 <= 0.6);
  const r2 = ratio(ours, ping);
  target('1 worker: acquire p50 vs PING round trip', `${fmt(ours, 3)} ms`, ping, `${fmt(ping, 3)} ms`, r2, '≤ 1.5', r2 <= 1.5);
}
{
  const theirs = med('distinct-128-async', 'node', 'ops_per_s');
  const driver = { 'distinct-128': 'threads', 'distinct-128-t1000': 'threads, node timeout 1 s', 'distinct-128-async': 'async' };
  for (const label of Object.keys(driver)) {
    const ours = med(label, 'ours', 'ops_per_s');
    if (ours == null) continue;
    const r = ratio(ours, theirs);
    target(`128 workers, distinct: cycles/s (${driver[label]}) vs node-redlock auto-pipelined`,
      fmt(ours, 0), theirs, fmt(theirs, 0), r, '≥ 4', r >= 4);
  }
}
for (const [label, against] of [['distinct-1', 'distinct-1'], ['distinct-16', 'distinct-16'], ['distinct-128', 'distinct-128'],
  ['distinct-16-async', 'distinct-16'], ['distinct-128-async', 'distinct-128']]) {
  const ours = med(label, 'ours', 'cpu_us_per_cycle.total');
  const theirs = med(against, 'node', 'cpu_us_per_cycle.total');
  const r = ratio(ours, theirs);
  target(`client CPU per cycle, ${label}`, `${fmt(ours)} µs`, theirs, `${fmt(theirs)} µs (node-redlock ${against})`, r, '≤ 0.1', r <= 0.1);
}
for (const [label, against] of [['distinct-16', 'distinct-16-async'], ['distinct-128', 'distinct-128-async'],
  ['distinct-16-async', 'distinct-16-async'], ['distinct-128-async', 'distinct-128-async']]) {
  const ours = med(label, 'ours', 'redis_cpu_us_per_cycle');
  const theirs = med(against, 'node', 'redis_cpu_us_per_cycle');
  const r = ratio(ours, theirs);
  target(`Redis CPU per cycle, ${label}`, `${fmt(ours)} µs`, theirs, `${fmt(theirs)} µs (auto-pipelined, ${against.replace('-async', '')})`,
    r, '≤ 1', r <= 1);
}
for (const w of [16, 128]) {
  for (const label of [`hot-wait-${w}`, `hot-wait-${w}-async`]) {
    const ours = med(label, 'ours', 'ops_per_s');
    if (ours == null) continue;
    const theirs = med(`hot-${w}`, 'node', 'ops_per_s');
    const r = ratio(ours, theirs);
    target(`hot key, ${w} workers, waiting (${label.endsWith('async') ? 'async' : 'threads'}) vs node-redlock retry-based`,
      fmt(ours, 0), theirs, `${fmt(theirs, 0)} (retryCount 0, retried at once)`, r, '≥ 10', r >= 10);
    const sleeping = med(`hot-wait-${w}`, 'node', 'ops_per_s');
    const r2 = ratio(ours, sleeping);
    target(`hot key, ${w} workers, waiting (${label.endsWith('async') ? 'async' : 'threads'}) vs node-redlock's own retry delay`,
      fmt(ours, 0), sleeping, `${fmt(sleeping, 0)} (retryDelay 200 ± 100 ms)`, r2, '(for reference)', r2 >= 1);
  }
}
{
  const paused = med('pause1-1', 'ours', 'acquire_ms.p50');
  const healthy = med('distinct-1', 'ours', 'acquire_ms.p50');
  const r = ratio(paused, healthy);
  target('1 of 5 paused, 1 worker: acquire p50 vs healthy', `${fmt(paused, 3)} ms`, healthy, `${fmt(healthy, 3)} ms`, r, '≤ 1.1', r <= 1.1);
  const growth = med('pause1-16', 'ours', 'client_rss_growth_mb');
  const theirs = med('pause1-16', 'node', 'client_rss_growth_mb');
  const duration = med('pause1-16', 'ours', 'elapsed_s');
  target(`1 of 5 paused, 16 workers: client RSS growth in ${fmt(duration, 0)} s`, `${fmt(growth)} MB`, theirs,
    `${fmt(theirs)} MB (node-redlock)`, growth, '≤ 10 MB', growth <= 10);
}
for (const label of ['pause3-1', 'pause3-1-t500']) {
  const ours = max(label, 'ours', 'acquire_fail_ms.max');
  const timeout = runsOf(label, 'ours')[0]?.node_timeout_ms;
  if (ours == null || timeout == null) continue;
  const theirs = max('pause3-1', 'node', 'acquire_fail_ms.p50');
  target(`3 of 5 paused: slowest failure (node timeout ${timeout} ms)`, `${fmt(ours, 1)} ms`, theirs,
    `${fmt(theirs, 0)} ms (node-redlock failure p50 at a 500 ms command timeout)`, ours, `≤ ${timeout + 10} ms`, ours <= timeout + 10);
}

// Against the limit: how much of what the machine allows the library reaches.
for (const [label, driver, most] of [['distinct-128', 'threads', 0.5], ['distinct-128-async', 'async', 0.8]]) {
  const ours = med(label, 'ours', 'ops_per_s');
  const limit = limitOf(128, 'ops_per_s');
  const r = ratio(ours, limit);
  target(`128 workers, distinct: cycles/s (${driver}) vs the limit`, fmt(ours, 0), limit, `${fmt(limit, 0)} (limit, B = 128)`,
    r, `≥ ${most}`, r >= most);
}
for (const [label, driver, most] of [['distinct-1', 'threads', 1.25], ['distinct-1-async', 'async', 1.15]]) {
  const ours = med(label, 'ours', 'acquire_ms.p50');
  const limit = limitOf(1, 'acquire_ms.p50');
  const r = ratio(ours, limit);
  target(`1 worker: acquire p50 (${driver}) vs the limit`, `${fmt(ours, 3)} ms`, limit, `${fmt(limit, 3)} ms (limit, B = 1)`,
    r, `≤ ${most}`, r <= most);
}
for (const [label, driver, most] of [['distinct-128', 'threads', 5], ['distinct-128-async', 'async', 2]]) {
  const ours = med(label, 'ours', 'cpu_us_per_cycle.total');
  const limit = limitOf(128, 'cpu_us_per_cycle.total');
  const r = ratio(ours, limit);
  target(`128 workers: client CPU per cycle (${driver}) vs the limit`, `${fmt(ours)} µs`, limit,
    `${fmt(limit)} µs (limit, B = 128)`, r, `≤ ${most}`, r <= most);
}
for (const [label, driver] of [['distinct-128', 'threads'], ['distinct-128-async', 'async']]) {
  const ours = med(label, 'ours', 'redis_cpu_us_per_cycle');
  const limit = limitOf(128, 'redis_cpu_us_per_cycle');
  const r = ratio(ours, limit);
  target(`128 workers: the nodes' CPU per cycle (${driver}) vs the limit`, `${fmt(ours)} µs`, limit,
    `${fmt(limit)} µs (limit, B = 128)`, r, '≤ 1.2', r <= 1.2);
}
out.push('');
process.stdout.write(`${out.join('\n')}\n`);
