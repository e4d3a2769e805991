// redlock-handoff-bench: what the synchronous API pays to reach the client's loop thread
// and hear back, with no I/O at all. Client::lock() and Lock::unlock() each post their
// operation to the loop thread and sleep until it answers; here W threads do exactly
// that with an empty task, through the library's own LoopThread, so the figures bound
// from below the client CPU of any synchronous cycle (two handoffs). One
// redlock-bench/v1 JSON line on stdout.

#include <semaphore.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <functional>
#include <iostream>
#include <thread>
#include <vector>

#include "client/loop/loop_thread.hpp"
#include "handoff_options.hpp"
#include "handoff_report.hpp"
#include "process_usage.hpp"

namespace redlock_handoff {

namespace {

using Clock = std::chrono::steady_clock;
using redlock::detail::LoopThread;

// The bare handoff under a synchronous call (lib/client/calls/sync_call.hpp, whose wait is
// LoopThread::call), without the call's own allocation: a semaphore on the caller's
// stack, posted by a task whose closure holds only a pointer, so std::function keeps it
// in place and a post allocates nothing.
class Handoff {
 public:
  Handoff() { ::sem_init(&answered_, 0, 0); }
  ~Handoff() { ::sem_destroy(&answered_); }
  Handoff(const Handoff&) = delete;
  Handoff& operator=(const Handoff&) = delete;

  /// False when the loop no longer takes tasks.
  bool run(LoopThread& loop) {
    if (!loop.post([this] { ::sem_post(&answered_); })) return false;
    while (::sem_wait(&answered_) != 0) {
      // EINTR: a signal handler ran; the answer is still to come.
    }
    return true;
  }

 private:
  sem_t answered_;
};

struct Flags {
  std::atomic<bool> measuring{false};
  std::atomic<bool> stopping{false};
  std::atomic<bool> refused{false};
};

// Cycles completed while the window was open. Counted in a local so that the workers
// share no cache line while they run.
std::uint64_t work(LoopThread& loop, Flags& flags) {
  std::uint64_t cycles = 0;
  while (!flags.stopping.load(std::memory_order_relaxed)) {
    for (std::uint64_t i = 0; i < handoffs_per_cycle; ++i) {
      Handoff handoff;
      if (!handoff.run(loop)) {
        flags.refused = true;
        return cycles;
      }
    }
    if (flags.measuring.load(std::memory_order_relaxed)) ++cycles;
  }
  return cycles;
}

// LoopThread's destructor requires stop(), and an own loop's thread ends only after it;
// on every way out, also when starting a worker throws.
struct LoopStopper {
  LoopThread& loop;
  ~LoopStopper() {
    loop.stop([](std::function<void()> closed) { closed(); });
    loop.wait_finished();
  }
};

// Joins the workers before the loop they post to stops, on every way out.
struct Workers {
  Flags& flags;
  std::vector<std::thread> threads;
  ~Workers() {
    flags.stopping = true;
    for (auto& thread : threads) thread.join();
  }
};

redlock_bench::ProcessUsage minus(const redlock_bench::ProcessUsage& end,
                                  const redlock_bench::ProcessUsage& start) {
  return {end.user_us - start.user_us, end.system_us - start.system_us,
          end.voluntary_switches - start.voluntary_switches,
          end.involuntary_switches - start.involuntary_switches};
}

int run(const HandoffOptions& options) {
  LoopThread loop;
  LoopStopper stopper{loop};
  Flags flags;
  std::vector<std::uint64_t> cycles(static_cast<std::size_t>(options.workers), 0);
  HandoffRun facts;
  facts.options = &options;
  {
    Workers workers{flags, {}};
    workers.threads.reserve(cycles.size());
    for (auto& counted : cycles) {
      workers.threads.emplace_back([&loop, &flags, &counted] { counted = work(loop, flags); });
    }

    // Thread start-up and the first allocations belong to the warm-up, not the window.
    std::this_thread::sleep_for(std::chrono::duration<double>(options.warmup_s));
    facts.rss_start_mb = redlock_bench::resident_mb();
    const auto usage_start = redlock_bench::process_usage();
    const auto window_start = Clock::now();
    flags.measuring = true;
    std::this_thread::sleep_for(std::chrono::duration<double>(options.duration_s));
    flags.measuring = false;
    const auto window_end = Clock::now();
    const auto usage_end = redlock_bench::process_usage();
    facts.rss_end_mb = redlock_bench::resident_mb();

    facts.elapsed_s = std::chrono::duration<double>(window_end - window_start).count();
    facts.usage = minus(usage_end, usage_start);
  }
  if (flags.refused) {
    std::fprintf(stderr, "redlock-handoff-bench: the loop thread refused a task\n");
    return 1;
  }
  for (const auto counted : cycles) facts.cycles += counted;
  std::cout << handoff_report_line(facts) << std::endl;
  return 0;
}

}  // namespace

}  // namespace redlock_handoff

int main(int argc, char** argv) {
  const auto options = redlock_handoff::parse_handoff_options(argc, argv);
  try {
    return redlock_handoff::run(options);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "redlock-handoff-bench: %s\n", error.what());
    return 1;
  }
}
