#!/usr/bin/env bash
# bench_charts: the data files of bench/compare's charts (node --test), then, where
# gnuplot is installed, bench/charts draws three SVGs from a small results file that
# name every client with points. Exits 77 (a skip for CTest) without node.
#
#   charts_test.sh path/to/bench
set -euo pipefail
here=$1
command -v node >/dev/null || { echo "bench_charts: SKIPPED: node not found" >&2; exit 77; }
node --test "$here/chart-data.test.js"

if ! command -v gnuplot >/dev/null; then
  echo "bench_charts: gnuplot not found: the drawing is not checked (apt-get install gnuplot-nox)"
  exit 0
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/redlock-charts-test.XXXXXX")
trap 'rm -rf "$dir"' EXIT
for w in 1 16 128; do
  for client in "redlock-bench distinct-$w" "redlock-bench distinct-$w-async" \
                "redlock-bench.js distinct-$w" "redlock-bench.js distinct-$w-async" \
                "redlock-fanout-limit distinct-$w"; do
    read -r bench label <<<"$client"
    printf '{"bench":"%s","label":"%s","workers":%d,"mode":"distinct","ops_per_s":%d,"granted_reply_ratio":1,' \
      "$bench" "$label" "$w" $((w * 300 + ${#label} * 10))
    printf '"acquire_ms":{"p50":0.1,"p90":0.2,"p99":0.4,"max":%d}}\n' $((w + ${#bench}))
  done
done >"$dir/results.jsonl"
"$here/charts" "$dir/results.jsonl" "$dir/charts"
for chart in throughput latency-1 latency-128; do
  svg="$dir/charts/$chart.svg"
  grep -q '<svg' "$svg" || { echo "bench_charts: $svg is not an SVG" >&2; exit 1; }
  for name in 'redlock-cpp (threads)' 'redlock-cpp (async)' 'npm redlock' 'limit'; do
    grep -qF "$name" "$svg" || { echo "bench_charts: $chart.svg does not name $name" >&2; exit 1; }
  done
done
echo "bench_charts: three charts drawn"
