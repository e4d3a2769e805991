// redlock-fanout-limit: the physical limit of a Redlock cycle on the given nodes, the
// yardstick bench/compare divides the library's figures by. One thread and bare
// sockets, so nothing but the protocol costs: B cycles in lockstep, each SET key value
// NX PX ttl on every node (an acquire is decided when a quorum granted it), then the
// owner-checked release on every node, confirmed by all. B = 1 is the latency limit of
// one worker; B = 128 the throughput limit of 128 workers (a write carries 128 commands).
// One redlock-bench/v1 JSON line on stdout; exit status 1 when fewer than 99 % of the
// replies granted (a cycle that did not lock must not pass for a fast one).

#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "cycle_batch.hpp"
#include "limit_options.hpp"
#include "limit_report.hpp"
#include "lockstep.hpp"
#include "process_usage.hpp"
#include "raw_node.hpp"
#include "redis_admin.hpp"

namespace redlock_limit {

namespace {

using redlock_bench::NodeCounters;
using redlock_bench::RedisAdmin;

std::string run_id() {
  std::random_device random;
  char text[16];
  std::snprintf(text, sizeof text, "%08x", random());
  return text;
}

// The SHA-1 a node gives the release script; every node must give the same, since one
// encoded release goes to all of them.
std::string load_release_script(std::vector<RawNode>& nodes) {
  std::string load;
  append_command(load, {"SCRIPT", "LOAD", release_script});
  std::string sha;
  for (auto& node : nodes) {
    node.send(load);
    // The reply is "$40\r\n<sha>\r\n", or an error line.
    for (;;) {
      node.receive();
      const auto reply = node.pending();
      const auto line_end = reply.find("\r\n");
      if (line_end == std::string_view::npos) continue;
      if (reply.front() != '$') {
        throw std::runtime_error(node.name() +
                                 ": SCRIPT LOAD: " + std::string(reply.substr(0, line_end)));
      }
      if (reply.size() < line_end + 2 + 40 + 2) continue;
      const std::string mine(reply.substr(line_end + 2, 40));
      if (!sha.empty() && mine != sha) throw std::runtime_error(node.name() + ": another SHA-1");
      sha = mine;
      node.consume(line_end + 2 + 40 + 2);
      break;
    }
  }
  return sha;
}

NodeCounters minus(const NodeCounters& end, const NodeCounters& start) {
  return {end.cpu_us - start.cpu_us, end.commands - start.commands, end.reads - start.reads,
          end.connections - start.connections};
}

redlock_bench::ProcessUsage minus(const redlock_bench::ProcessUsage& end,
                                  const redlock_bench::ProcessUsage& start) {
  return {end.user_us - start.user_us, end.system_us - start.system_us,
          end.voluntary_switches - start.voluntary_switches,
          end.involuntary_switches - start.involuntary_switches};
}

double ms_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

int run(const LimitOptions& options) {
  std::vector<RawNode> nodes;
  for (const auto& address : options.nodes) nodes.emplace_back(address, options.reply_timeout);
  // INFO goes over a separate connection, so reading the nodes' counters never mixes
  // with the cycles' replies.
  std::vector<std::unique_ptr<RedisAdmin>> admins;
  for (const auto& node : nodes) admins.push_back(std::make_unique<RedisAdmin>(node.name()));

  const std::size_t n = nodes.size();
  const auto quorum = static_cast<unsigned>(n / 2 + 1);
  const auto b = static_cast<std::size_t>(options.batch);
  CycleBatch batch("limit:" + run_id() + ":", options.batch, options.ttl,
                   load_release_script(nodes));
  Lockstep lockstep(nodes, options.reply_timeout);

  LimitRun facts;
  facts.options = &options;
  facts.quorum = static_cast<int>(quorum);
  std::vector<double> acquire_ms;

  auto one_batch = [&](bool measured) {
    batch.renew_values();
    const auto started = Clock::now();
    const PhaseResult& acquired = lockstep.run(batch.acquires(), b, quorum);
    const auto all_acquires_answered = acquired.all_answered_ms;
    acquire_ms = acquired.decided_ms;
    std::size_t granted = acquired.granted;
    std::size_t errors = acquired.errors;
    const auto release_started = Clock::now();
    // Releases go out for every cycle, also one that missed its quorum: the nodes that
    // granted it must let the key go.
    const PhaseResult& released = lockstep.run(batch.releases(), b, n);
    if (!measured) return;
    granted += released.granted;
    errors += released.errors;
    const double release_offset = ms_between(started, release_started);
    for (std::size_t k = 0; k < b; ++k) {
      ++facts.attempts;
      if (acquire_ms[k] < 0) {
        ++facts.failures;
        facts.acquire_fail.add(all_acquires_answered);
        continue;
      }
      ++facts.cycles;
      facts.acquire.add(acquire_ms[k]);
      if (released.decided_ms[k] < 0) {
        ++facts.release_failures;
      } else {
        facts.release.add(released.decided_ms[k]);
        facts.cycle.add(release_offset + released.decided_ms[k]);
      }
    }
    facts.replies += 2 * n * b;
    facts.granted_replies += granted;
    facts.error_replies += errors;
  };

  const auto warm_until = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                             std::chrono::duration<double>(options.warmup_s));
  while (Clock::now() < warm_until) one_batch(false);

  const auto redis_start = redlock_bench::sum_counters(admins);
  const double rss_start = redlock_bench::resident_mb();
  const auto usage_start = redlock_bench::process_usage();
  const auto window_start = Clock::now();
  const auto window_end = window_start + std::chrono::duration_cast<Clock::duration>(
                                             std::chrono::duration<double>(options.duration_s));
  // A batch that straddles the end still counts, and the window ends with it, so no
  // cycle is counted without its time.
  do {
    one_batch(true);
  } while (Clock::now() < window_end);
  const auto window_closed = Clock::now();
  const auto usage_end = redlock_bench::process_usage();
  facts.rss_end_mb = redlock_bench::resident_mb();
  const auto redis_end = redlock_bench::sum_counters(admins);

  facts.elapsed_s = std::chrono::duration<double>(window_closed - window_start).count();
  facts.usage = minus(usage_end, usage_start);
  facts.rss_start_mb = rss_start;
  if (redis_start && redis_end) facts.redis = minus(*redis_end, *redis_start);
  std::cout << limit_report_line(facts) << std::endl;

  // Keys of cycles whose release failed would otherwise stay until their TTL.
  for (auto& admin : admins) admin->del(batch.keys());

  if (granted_ratio(facts) < 0.99) {
    std::fprintf(stderr, "redlock-fanout-limit: only %llu of %llu replies granted\n",
                 static_cast<unsigned long long>(facts.granted_replies),
                 static_cast<unsigned long long>(facts.replies));
    return 1;
  }
  return 0;
}

}  // namespace

}  // namespace redlock_limit

int main(int argc, char** argv) {
  const auto options = redlock_limit::parse_limit_options(argc, argv);
  try {
    return redlock_limit::run(options);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "redlock-fanout-limit: %s\n", error.what());
    return 1;
  }
}
