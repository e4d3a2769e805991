#include "handoff_options.hpp"

#include <CLI/CLI.hpp>
#include <cstdlib>

#include "run_options.hpp"

namespace redlock_handoff {

HandoffOptions parse_handoff_options(int argc, char** argv) {
  HandoffOptions options;
  CLI::App app{
      "redlock-handoff-bench: what the synchronous API's thread handoff costs, without I/O. W "
      "threads each post an empty task to the library's LoopThread and wait on a semaphore the "
      "task posts, as Client::lock() and Lock::unlock() do; a lock+unlock cycle is two such "
      "handoffs.\nPrints one redlock-bench/v1 JSON line on stdout."};
  app.get_formatter()->column_width(30);

  app.add_option("--workers,-w", options.workers, "W, the threads handing off to one loop thread")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  redlock_bench::add_window_options(app, options.duration_s, options.warmup_s);
  redlock_bench::add_run_options(app, options.label, options.run);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    std::exit(app.exit(error));
  }
  return options;
}

}  // namespace redlock_handoff
