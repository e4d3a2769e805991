/* libredlock_fakeclock.so: an LD_PRELOAD library that runs a process's wall clock with an
 * offset and at a rate, for clock faults on a Redis node (Redis 7 expires keys by the wall
 * clock, so a node whose clock jumps or runs fast forgets locks early).
 *
 * Why not libfaketime: it hangs redis-server, because it resolves the real functions with
 * dlsym() at first use, which allocates, while jemalloc is initialising and itself asks for
 * the time. This library never allocates, never calls dlsym and reads the real clocks with
 * the raw system call, so it is safe from the first instruction of the process.
 *
 * Interposed: clock_gettime(CLOCK_REALTIME, CLOCK_REALTIME_COARSE), gettimeofday(), time().
 * Every other clock (CLOCK_MONOTONIC above all) passes through unchanged.
 *
 * Control: the file named by $REDLOCK_FAKECLOCK_FILE holds "OFFSET_MS [RATE]", e.g.
 * "20000" (20 s ahead) or "0 3.0" (three times as fast). Without the variable, or until
 * the file exists, the clock is real. The file is checked at most every 10 ms (by mtime,
 * inode and size) and its new contents take effect from that moment:
 *     fake(real) = anchor + (real - anchor_real) * rate + offset
 * where anchor_real is the real time of the change and anchor is the rate-scaled time
 * reached then, so a new rate continues from where the old one left off while a new offset
 * jumps at once. Rewrite the file by renaming a new file over it: two in-place writes
 * within one kernel tick may keep the same mtime and size.
 *
 * Threads: readers never wait. Parameters live in a ring of immutable slots published by
 * an atomic index; the one thread that wins a try-lock re-reads the file, and a thread
 * that loses simply uses the current slot. A child forked while the lock was held just
 * never re-reads the file, which is harmless for Redis' short-lived fork children.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

enum { refresh_ns = 10 * 1000 * 1000, slot_count = 64, path_max = 4096 };

struct params {
  int64_t anchor_real_ns;
  int64_t anchor_ns; /* rate-scaled time at anchor_real_ns, offset excluded */
  double rate;
  int64_t offset_ns;
};

/* Statically the identity, so a call that comes before the constructor is still right. */
static struct params slots[slot_count] = {{0, 0, 1.0, 0}};
static unsigned published; /* slots[published % slot_count] is current */
static int refreshing;     /* try-lock of the one thread re-reading the file */
static int64_t next_check_ns;

/* Under the try-lock only. */
static struct {
  int64_t mtime_sec, mtime_nsec, ino, size;
  int valid;
} seen;

/* Copied at load time: Redis rewrites its environment block for its process title. */
static char control_path[path_max];

__attribute__((constructor)) static void fakeclock_init(void) {
  const char* path = getenv("REDLOCK_FAKECLOCK_FILE");
  if (path && *path && strlen(path) < sizeof control_path) {
    memcpy(control_path, path, strlen(path) + 1);
  }
}

static int64_t to_ns(const struct timespec* ts) {
  return (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
}

static struct timespec from_ns(int64_t ns) {
  struct timespec ts;
  ts.tv_sec = ns / 1000000000;
  ts.tv_nsec = ns % 1000000000;
  if (ts.tv_nsec < 0) {
    ts.tv_nsec += 1000000000;
    ts.tv_sec -= 1;
  }
  return ts;
}

static int real_clock(clockid_t id, struct timespec* ts) {
  return (int)syscall(SYS_clock_gettime, id, ts);
}

static int64_t scaled(const struct params* p, int64_t real_ns) {
  const int64_t elapsed = real_ns - p->anchor_real_ns;
  /* Exact at rate 1: a double cannot hold nanoseconds since 1970. */
  if (p->rate == 1.0) return p->anchor_ns + elapsed;
  return p->anchor_ns + (int64_t)((double)elapsed * p->rate);
}

/* "OFFSET_MS [RATE]": a signed integer and an optional positive decimal. */
static int parse_params(const char* text, int64_t* offset_ms, double* rate) {
  const char* s = text;
  while (*s == ' ' || *s == '\t' || *s == '\n') ++s;
  int negative = 0;
  if (*s == '-' || *s == '+') negative = *s++ == '-';
  if (*s < '0' || *s > '9') return 0;
  int64_t value = 0;
  while (*s >= '0' && *s <= '9') value = value * 10 + (*s++ - '0');
  *offset_ms = negative ? -value : value;
  while (*s == ' ' || *s == '\t') ++s;
  *rate = 1.0;
  if (*s == '\n' || *s == '\0') return 1;
  double whole = 0, scale = 1;
  int digits = 0;
  while (*s >= '0' && *s <= '9') whole = whole * 10 + (*s++ - '0'), ++digits;
  if (*s == '.') {
    ++s;
    while (*s >= '0' && *s <= '9') scale /= 10, whole += (*s++ - '0') * scale, ++digits;
  }
  if (digits == 0 || whole <= 0) return 0;
  *rate = whole;
  return 1;
}

static void reload(void) {
  struct stat st;
  if (syscall(SYS_newfstatat, AT_FDCWD, control_path, &st, 0) != 0) {
    seen.valid = 0; /* keep the current parameters; a new file is read when it appears */
    return;
  }
  if (seen.valid && seen.mtime_sec == st.st_mtim.tv_sec && seen.mtime_nsec == st.st_mtim.tv_nsec &&
      seen.ino == (int64_t)st.st_ino && seen.size == (int64_t)st.st_size) {
    return;
  }
  char text[128];
  const int fd = (int)syscall(SYS_openat, AT_FDCWD, control_path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  const long n = syscall(SYS_read, fd, text, sizeof text - 1);
  syscall(SYS_close, fd);
  if (n < 0) return;
  text[n] = '\0';
  int64_t offset_ms;
  double rate;
  /* A half-written file is read again on the next check. */
  if (!parse_params(text, &offset_ms, &rate)) return;
  seen.mtime_sec = st.st_mtim.tv_sec;
  seen.mtime_nsec = st.st_mtim.tv_nsec;
  seen.ino = (int64_t)st.st_ino;
  seen.size = (int64_t)st.st_size;
  seen.valid = 1;

  struct timespec now;
  if (real_clock(CLOCK_REALTIME, &now) != 0) return;
  const unsigned current = __atomic_load_n(&published, __ATOMIC_ACQUIRE);
  const struct params* old = &slots[current % slot_count];
  struct params* next = &slots[(current + 1) % slot_count];
  next->anchor_real_ns = to_ns(&now);
  next->anchor_ns = scaled(old, next->anchor_real_ns);
  next->rate = rate;
  next->offset_ns = offset_ms * 1000000;
  __atomic_store_n(&published, current + 1, __ATOMIC_RELEASE);
}

static void maybe_reload(int64_t real_ns) {
  if (!control_path[0]) return;
  const int64_t next = __atomic_load_n(&next_check_ns, __ATOMIC_RELAXED);
  /* The second test notices a real clock stepped backwards. */
  if (real_ns < next && real_ns > next - 2 * (int64_t)refresh_ns) return;
  if (__atomic_exchange_n(&refreshing, 1, __ATOMIC_ACQUIRE)) return;
  __atomic_store_n(&next_check_ns, real_ns + refresh_ns, __ATOMIC_RELAXED);
  reload();
  __atomic_store_n(&refreshing, 0, __ATOMIC_RELEASE);
}

static int64_t fake_ns(int64_t real_ns) {
  maybe_reload(real_ns);
  const unsigned current = __atomic_load_n(&published, __ATOMIC_ACQUIRE);
  const struct params* p = &slots[current % slot_count];
  return scaled(p, real_ns) + p->offset_ns;
}

EXPORT int clock_gettime(clockid_t id, struct timespec* ts) {
  if (real_clock(id, ts) != 0) return -1;
  if (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE) *ts = from_ns(fake_ns(to_ns(ts)));
  return 0;
}

EXPORT int gettimeofday(struct timeval* restrict tv, void* restrict tz) {
  struct timespec ts;
  if (real_clock(CLOCK_REALTIME, &ts) != 0) return -1;
  /* glibc declares tv nonnull, which would let the compiler drop this check; the kernel
   * accepts NULL, so some callers pass it. The volatile copy keeps the check. */
  struct timeval* volatile out = tv;
  if (out) {
    ts = from_ns(fake_ns(to_ns(&ts)));
    out->tv_sec = ts.tv_sec;
    out->tv_usec = ts.tv_nsec / 1000;
  }
  /* The time zone argument is obsolete; glibc fills it with zeros too. */
  if (tz) memset(tz, 0, sizeof(struct timezone));
  return 0;
}

EXPORT time_t time(time_t* out) {
  struct timespec ts;
  if (real_clock(CLOCK_REALTIME, &ts) != 0) return (time_t)-1;
  const time_t seconds = from_ns(fake_ns(to_ns(&ts))).tv_sec;
  if (out) *out = seconds;
  return seconds;
}
