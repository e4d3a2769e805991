#include "limit_options.hpp"

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <sstream>

#include "run_options.hpp"

namespace redlock_limit {

LimitOptions parse_limit_options(int argc, char** argv) {
  LimitOptions options;
  CLI::App app{
      "redlock-fanout-limit: the least work any Redlock client can do on these nodes. One "
      "thread, bare sockets: B cycles in lockstep, each SET key value NX PX ttl on every node "
      "(decided at the quorum-th grant), then the owner-checked release on every node.\n"
      "Prints one redlock-bench/v1 JSON line on stdout."};
  app.get_formatter()->column_width(30);

  std::string nodes;
  if (const char* env = std::getenv("REDLOCK_NODES")) nodes = env;
  if (nodes.empty()) {
    nodes = "127.0.0.1:7101,127.0.0.1:7102,127.0.0.1:7103,127.0.0.1:7104,127.0.0.1:7105";
  }
  app.add_option("--nodes", nodes,
                 "Comma-separated host:port pairs or redis:// URLs (default: $REDLOCK_NODES, "
                 "else 127.0.0.1:7101..7105)");
  app.add_option("--workers,-w,--batch", options.batch,
                 "B, the cycles in lockstep (each write carries B commands)")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  redlock_bench::add_window_options(app, options.duration_s, options.warmup_s);
  long long ttl_ms = options.ttl.count();
  app.add_option("--ttl", ttl_ms, "Lock TTL, ms")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  long long timeout_ms = options.reply_timeout.count();
  app.add_option("--reply-timeout", timeout_ms, "How long a node may stay silent, ms")
      ->check(CLI::Range(1, 600'000))
      ->capture_default_str();
  redlock_bench::add_run_options(app, options.label, options.run);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    std::exit(app.exit(error));
  }
  std::stringstream list(nodes);
  std::string node;
  while (std::getline(list, node, ',')) {
    if (!node.empty()) options.nodes.push_back(node);
  }
  if (options.nodes.empty()) {
    std::fprintf(stderr, "redlock-fanout-limit: --nodes: no node given\n");
    std::exit(2);
  }
  options.ttl = std::chrono::milliseconds(ttl_ms);
  options.reply_timeout = std::chrono::milliseconds(timeout_ms);
  return options;
}

}  // namespace redlock_limit
