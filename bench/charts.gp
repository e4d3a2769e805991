# The charts of bench/compare, drawn from the data files of bench/chart-data.js:
#   gnuplot -e "dir='OUTDIR'" bench/charts.gp
# -> OUTDIR/throughput.svg, OUTDIR/latency-1.svg, OUTDIR/latency-128.svg
# Five lines each, in the column order of the data files: the library with each driver,
# npm redlock without and with auto-pipelining, and the limit (dashed, since it is a
# bound rather than a client).

if (!exists("dir")) dir = "."
set datafile missing "?"
set terminal svg size 760,440 dynamic enhanced font "sans,13" background rgb "white"
set grid lc rgb "#dddddd"
set border lc rgb "#555555"
set key outside right center box lc rgb "#cccccc" spacing 1.3

set style line 1 lc rgb "#1f77b4" lw 2.5 pt 7 ps 1.1
set style line 2 lc rgb "#2ca02c" lw 2.5 pt 5 ps 1.1
set style line 3 lc rgb "#d62728" lw 2.5 pt 9 ps 1.2
set style line 4 lc rgb "#ff7f0e" lw 2.5 pt 11 ps 1.2
set style line 5 lc rgb "#444444" lw 2.5 dt 2 pt 13 ps 1.2

set output dir."/throughput.svg"
set title "Acquire + release cycles per second, distinct keys"
set xlabel "workers (the limit: cycles in lockstep)"
set ylabel "cycles/s"
set logscale x 2
set xtics ("1" 1, "16" 16, "128" 128)
set xrange [0.8:160]
set yrange [0:*]
set format y "%.0s%c"
plot for [c=2:6] dir."/throughput.dat" using 1:c with linespoints ls (c-1) title columnheader(c)

unset logscale x
set format y "%g"
set xrange [-0.3:3.3]
set logscale y 10
set yrange [*:*]
set xlabel "percentile of the acquires of all runs"
set ylabel "acquire latency, ms (log scale)"
do for [w in "1 128"] {
  set output dir."/latency-".w.".svg"
  set title "Acquire latency, ".w.(w eq "1" ? " worker" : " workers").", distinct keys"
  plot for [c=2:6] dir."/latency-".w.".dat" using 0:c:xtic(1) with linespoints ls (c-1) title columnheader(c)
}
