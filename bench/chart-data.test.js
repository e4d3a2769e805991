'use strict';
// The data files of bench/compare's charts: one line per worker count or percentile, one
// column per client in a fixed order (the charts' colours follow it), medians over the
// runs, "?" where a client did not run.
//
//   node --test bench/chart-data.test.js

const assert = require('node:assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const test = require('node:test');
const { readRows, throughputTable, latencyTable, CLIENTS } = require('./chart-data.js');

const line = (bench, label, workers, opsPerS, p50, extra = {}) => JSON.stringify({
  schema: 'redlock-bench/v1', bench, label, workers, mode: 'distinct', ops_per_s: opsPerS,
  acquire_ms: { n: 10, p50, p90: p50 * 2, p99: p50 * 4, max: p50 * 10 }, ...extra,
});
const limitLine = (workers, opsPerS, p50, ratio = 1) =>
  line('redlock-fanout-limit', `distinct-${workers}`, workers, opsPerS, p50, { granted_reply_ratio: ratio });

function rowsOf(lines) {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'chart-data-')), 'results.jsonl');
  fs.writeFileSync(file, `${lines.join('\n')}\nnot a result line\n`);
  return readRows(file);
}
const table = (text) => text.trim().split('\n').filter((l) => !l.startsWith('#')).map((l) => l.split(' '));

test('cycles/s: the median of the runs per client, ? where a client did not run', () => {
  const rows = rowsOf([
    line('redlock-bench', 'distinct-1', 1, 3000, 0.13), line('redlock-bench', 'distinct-1', 1, 1000, 0.2),
    line('redlock-bench', 'distinct-1', 1, 2000, 0.1),
    line('redlock-bench.js', 'distinct-128-async', 128, 11000, 8),
    limitLine(128, 60000, 0.4), limitLine(128, 40000, 0.5),
  ]);
  const [head, one, sixteen, many] = table(throughputTable(rows));
  assert.strictEqual(head[0], 'workers');
  assert.strictEqual(head.length, 1 + CLIENTS.length * 2); // each quoted name is two words
  assert.deepStrictEqual(one, ['1', '2000', '?', '?', '?', '?']);
  assert.deepStrictEqual(sixteen, ['16', '?', '?', '?', '?', '?']);
  assert.deepStrictEqual(many, ['128', '?', '?', '?', '11000', '50000']);
});

test('the limit is found by its number of workers, and a run that did not lock is left out', () => {
  const rows = rowsOf([limitLine(1, 4000, 0.09), limitLine(1, 9999, 0.01, 0.5)]);
  const [, p50, p90] = table(latencyTable(rows, 1));
  assert.deepStrictEqual(p50, ['p50', '?', '?', '?', '?', '0.090']);
  assert.deepStrictEqual(p90, ['p90', '?', '?', '?', '?', '0.180']);
});

test('latency: a line per percentile, the async driver in its own column', () => {
  const rows = rowsOf([line('redlock-bench', 'distinct-128-async', 128, 38000, 2)]);
  const lines = table(latencyTable(rows, 128));
  assert.deepStrictEqual(lines.slice(1).map((l) => l[0]), ['p50', 'p90', 'p99', 'max']);
  assert.deepStrictEqual(lines[4], ['max', '?', '20.000', '?', '?', '?']);
});

test('a handoff row of bench/compare (no nodes, no locks) is in no column', () => {
  const handoff = (workers) => JSON.stringify({
    schema: 'redlock-bench/v1', bench: 'redlock-handoff-bench', label: `handoff-${workers}`, workers, run: 1,
    ops_per_s: 200000, cpu_us_per_handoff: { total: 8 }, cpu_us_per_cycle: { total: 16 },
  });
  const rows = rowsOf([handoff(1), handoff(16), handoff(128), line('redlock-bench', 'distinct-16', 16, 5000, 0.3)]);
  const [, one, sixteen, many] = table(throughputTable(rows));
  assert.deepStrictEqual(one, ['1', '?', '?', '?', '?', '?']);
  assert.deepStrictEqual(sixteen, ['16', '5000', '?', '?', '?', '?']);
  assert.deepStrictEqual(many, ['128', '?', '?', '?', '?', '?']);
  for (const w of [1, 128]) {
    for (const l of table(latencyTable(rows, w)).slice(1)) assert.deepStrictEqual(l.slice(1), ['?', '?', '?', '?', '?']);
  }
});
