#include "report.hpp"

#include <cstdio>
#include <string>

namespace redlock::cli {

void report(std::string_view message) {
  // One write per line, so lines of concurrent processes sharing a log do not interleave.
  std::string line = "redlock: ";
  line.append(message);
  line += '\n';
  std::fwrite(line.data(), 1, line.size(), stderr);
}

void report_failure(std::string_view what, const Error& error, int quorum) {
  const auto& nodes = error.nodes();
  if (nodes.empty()) {
    report(error.message());
    return;
  }
  int agreed = 0;
  int held = 0;
  for (const auto& node : nodes) {
    // A guarded member's grant did not count: it is listed below with its reason.
    agreed += node.status == NodeStatus::granted && node.counted;
    held += node.status == NodeStatus::held;
  }
  std::string headline = std::string(what) + ": " + error.code().message() + " (" +
                         std::to_string(agreed) + " of " + std::to_string(nodes.size()) +
                         " nodes agreed";
  if (quorum > 0) headline += ", " + std::to_string(quorum) + " needed";
  if (held > 0) headline += ", " + std::to_string(held) + " held by another owner";
  headline += ")";
  report(headline);
  // Nodes still pending when a contention was decided are no cause of it; an unreachable
  // quorum waits for every node unless it gave up on the silent ones, which are its cause.
  const bool contention = error == errc::conflict;
  bool young = false;
  for (const auto& node : nodes) {
    if ((node.status == NodeStatus::granted && node.counted) ||
        (node.status == NodeStatus::pending && (contention || node.detail.empty()))) {
      continue;
    }
    if (contention && node.status == NodeStatus::held) continue;
    const auto line = describe(node);
    young |= line.find("when first met") != std::string::npos;
    report("  " + line);
  }
  // The default young-member rule is what a user who just started a fleet meets first.
  if (young) {
    report(
        "nodes up for less than --longest-ttl are not counted, as they may have restarted "
        "without their keys; on a fleet started on purpose just now, pass "
        "--no-guard-young-members");
  }
}

}  // namespace redlock::cli
