#!/usr/bin/env node
'use strict';
// The data files behind bench/compare's charts, from its results.jsonl: cycles/s
// against workers for each client and the limit, and the acquire latency at each
// percentile with 1 and with 128 workers. Each value is the median over the runs, as in
// the report's tables; a missing one is "?" (gnuplot leaves a gap).
//
//   node bench/chart-data.js results.jsonl OUTDIR
//     -> OUTDIR/throughput.dat, OUTDIR/latency-1.dat, OUTDIR/latency-128.dat

const fs = require('fs');
const path = require('path');

// Which runs make each line of the charts: a workload label of bench/compare and the
// bench that ran it. The limit is found by its worker count instead, since it runs once
// per count whatever the driver of the row beside it.
const CLIENTS = [
  { name: 'redlock-cpp (threads)', bench: 'redlock-bench', label: (w) => `distinct-${w}` },
  { name: 'redlock-cpp (async)', bench: 'redlock-bench', label: (w) => `distinct-${w}-async` },
  { name: 'npm redlock', bench: 'redlock-bench.js', label: (w) => `distinct-${w}` },
  { name: 'npm redlock +autopipeline', bench: 'redlock-bench.js', label: (w) => `distinct-${w}-async` },
  { name: 'limit', bench: 'redlock-fanout-limit', workers: true },
];
const WORKERS = [1, 16, 128];
const PERCENTILES = ['p50', 'p90', 'p99', 'max'];

const median = (values) => {
  const v = values.filter((x) => typeof x === 'number' && Number.isFinite(x)).sort((a, b) => a - b);
  if (!v.length) return null;
  const m = v.length >> 1;
  return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
};

function readRows(file) {
  const rows = [];
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim().startsWith('{')) continue;
    try { rows.push(JSON.parse(line)); } catch (_) { /* not a result line */ }
  }
  // As in the report: a limit run whose cycles did not all lock and unlock measured nothing.
  return rows.filter((r) => r.bench !== 'redlock-fanout-limit' || r.granted_reply_ratio >= 0.99);
}

function runsOf(rows, client, workers) {
  return rows.filter((r) => r.bench === client.bench &&
    (client.workers ? r.workers === workers && r.mode === 'distinct' : r.label === client.label(workers)));
}

const cell = (x, digits) => (x == null ? '?' : Number(x).toFixed(digits));
const header = (first) => [first, ...CLIENTS.map((c) => `"${c.name}"`)].join(' ');

function throughputTable(rows) {
  const lines = ['# cycles/s (median over runs) against workers', header('workers')];
  for (const w of WORKERS) {
    lines.push([w, ...CLIENTS.map((c) => cell(median(runsOf(rows, c, w).map((r) => r.ops_per_s)), 0))].join(' '));
  }
  return `${lines.join('\n')}\n`;
}

function latencyTable(rows, workers) {
  const lines = [`# acquire latency in ms at ${workers} workers (median over runs of each percentile)`,
    header('percentile')];
  for (const p of PERCENTILES) {
    const values = CLIENTS.map((c) => cell(median(runsOf(rows, c, workers).map((r) => r.acquire_ms?.[p])), 3));
    lines.push([p, ...values].join(' '));
  }
  return `${lines.join('\n')}\n`;
}

function writeChartData(resultsFile, outDir) {
  const rows = readRows(resultsFile);
  fs.mkdirSync(outDir, { recursive: true });
  fs.writeFileSync(path.join(outDir, 'throughput.dat'), throughputTable(rows));
  for (const w of [1, 128]) fs.writeFileSync(path.join(outDir, `latency-${w}.dat`), latencyTable(rows, w));
}

module.exports = { readRows, throughputTable, latencyTable, CLIENTS };

if (require.main === module) {
  const [resultsFile, outDir] = process.argv.slice(2);
  if (!resultsFile || !outDir) {
    console.error('usage: node bench/chart-data.js results.jsonl OUTDIR');
    process.exit(2);
  }
  writeChartData(resultsFile, outDir);
}
