/* Prints what each interposed clock says, twice, SLEEP_MS apart (by CLOCK_MONOTONIC):
 *   MONOTONIC_NS REALTIME_NS REALTIME_COARSE_NS GETTIMEOFDAY_US TIME_S
 * The fake clock test runs it under LD_PRELOAD. Plain C and without sanitizers, like
 * redis-server, so that the preloaded library is the first thing it resolves against. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>

static long long ns(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void sample(void) {
  struct timeval tv;
  gettimeofday(&tv, NULL);
  const long long mono = ns(CLOCK_MONOTONIC);
  const long long real = ns(CLOCK_REALTIME);
  const long long coarse = ns(CLOCK_REALTIME_COARSE);
  printf("%lld %lld %lld %lld %lld\n", mono, real, coarse,
         (long long)tv.tv_sec * 1000000LL + tv.tv_usec, (long long)time(NULL));
}

int main(int argc, char** argv) {
  const long sleep_ms = argc > 1 ? atol(argv[1]) : 0;
  sample();
  struct timespec pause = {sleep_ms / 1000, (sleep_ms % 1000) * 1000000L};
  nanosleep(&pause, NULL);
  sample();
  return 0;
}
