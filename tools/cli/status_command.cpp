// redlock status: who holds KEY on each node, and for how long, so that "why can't I
// get this lock" is answered without redis-cli on five machines.

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "exit_codes.hpp"
#include "report.hpp"
#include "subcommands.hpp"

namespace redlock::cli {

namespace {

struct StatusArguments {
  std::string key;
  bool json = false;
};

/// Stable one-word states for scripts (NodeStatus' own words are for people).
const char* state_of(const NodeOutcome& node) {
  switch (node.status) {
    case NodeStatus::held:
      return "held";
    case NodeStatus::granted:
      return "held";
    case NodeStatus::not_held:
      return "free";
    case NodeStatus::timeout:
      return "timeout";
    case NodeStatus::connection_error:
      return "connection_error";
    case NodeStatus::redis_error:
      return "redis_error";
    case NodeStatus::cancelled:
      return "cancelled";
    case NodeStatus::pending:
      return "no_answer";
  }
  return "unknown";
}

bool answered(const NodeOutcome& node) {
  return node.status == NodeStatus::held || node.status == NodeStatus::not_held ||
         node.status == NodeStatus::granted;
}

std::string cause_of(const NodeOutcome& node) {
  std::string text = to_string(node.status);
  if (!node.detail.empty()) text += ": " + node.detail;
  return text;
}

/// The value held on at least `quorum` nodes: the owner as far as Redlock is concerned.
std::optional<std::string> quorum_holder(const std::vector<NodeOutcome>& nodes, int quorum) {
  std::map<std::string, int> counts;
  for (const auto& node : nodes) {
    if (node.status == NodeStatus::held && !node.holder.empty()) ++counts[node.holder];
  }
  for (const auto& [value, count] : counts) {
    if (count >= quorum) return value;
  }
  return std::nullopt;
}

std::string as_json(const std::string& key, const std::vector<NodeOutcome>& nodes, int quorum) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const auto& node : nodes) {
    const bool held = node.status == NodeStatus::held;
    list.push_back({
        {"node", node.node},
        {"reachable", answered(node)},
        {"state", state_of(node)},
        {"holder", held ? nlohmann::ordered_json(node.holder) : nlohmann::ordered_json(nullptr)},
        {"remaining_ttl_ms", held && node.remaining_ttl.count() >= 0
                                 ? nlohmann::ordered_json(node.remaining_ttl.count())
                                 : nlohmann::ordered_json(nullptr)},
        {"error",
         answered(node) ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(cause_of(node))},
        {"latency_us", node.latency.count()},
    });
  }
  const auto holder = quorum_holder(nodes, quorum);
  return nlohmann::ordered_json{
             {"key", key},
             {"quorum", quorum},
             {"holder", holder ? nlohmann::ordered_json(*holder) : nlohmann::ordered_json(nullptr)},
             {"nodes", list}}
             .dump(2) +
         "\n";
}

std::string as_table(const std::string& key, const std::vector<NodeOutcome>& nodes, int quorum) {
  const auto holder = quorum_holder(nodes, quorum);
  int holding = 0;
  int reachable = 0;
  for (const auto& node : nodes) {
    reachable += answered(node);
    holding += holder && node.status == NodeStatus::held && node.holder == *holder;
  }
  std::string text = "key \"" + key + "\": ";
  text += holder ? "held by " + *holder + " on " + std::to_string(holding) + " of " +
                       std::to_string(nodes.size()) + " nodes"
                 : std::string("not held by any value on a quorum");
  text += " (quorum " + std::to_string(quorum) + ", " + std::to_string(reachable) + " of " +
          std::to_string(nodes.size()) + " nodes answered)\n";

  std::size_t width = 4;
  for (const auto& node : nodes) width = std::max(width, node.node.size());
  auto row = [&](const std::string& node, const std::string& state, const std::string& ttl,
                 const std::string& holder_or_cause) {
    char line[64];
    std::snprintf(line, sizeof line, "  %-16s %-10s ", state.c_str(), ttl.c_str());
    text += node + std::string(width - node.size(), ' ') + line + holder_or_cause + "\n";
  };
  row("NODE", "STATE", "TTL", "HOLDER");
  for (const auto& node : nodes) {
    if (node.status == NodeStatus::held) {
      row(node.node, "held",
          node.remaining_ttl.count() >= 0 ? std::to_string(node.remaining_ttl.count()) + "ms"
                                          : "none",
          node.holder);
    } else if (answered(node)) {
      row(node.node, state_of(node), "-", "-");
    } else {
      row(node.node, state_of(node), "-", cause_of(node));
    }
  }
  return text;
}

int status(const GlobalOptions& globals, const StatusArguments& args) {
  auto client = globals.make_client();
  auto nodes = client->status(args.key);
  if (!nodes) {
    report_failure("status \"" + args.key + "\"", nodes.error(), client->quorum());
    return exit_code_for(nodes.error());
  }
  const int quorum = client->quorum();
  const auto text =
      args.json ? as_json(args.key, *nodes, quorum) : as_table(args.key, *nodes, quorum);
  std::fputs(text.c_str(), stdout);
  const auto reachable = std::count_if(nodes->begin(), nodes->end(), answered);
  if (reachable < quorum) {
    // Too few answers to tell whether the lock is held: a script must not read "free"
    // into that.
    report("status \"" + args.key + "\": only " + std::to_string(reachable) + " of " +
           std::to_string(nodes->size()) + " nodes answered (quorum " + std::to_string(quorum) +
           ")");
    for (const auto& node : *nodes) {
      if (!answered(node)) report("  " + describe(node));
    }
    return exit_code::unreachable;
  }
  return exit_code::ok;
}

}  // namespace

Subcommand add_status_command(CLI::App& parent, GlobalOptions& globals) {
  auto args = std::make_shared<StatusArguments>();
  auto* app = parent.add_subcommand(
      "status",
      "Show the lock KEY on every node: reachable or not, the holder's value and the "
      "remaining TTL.");
  app->add_flag("--json", args->json,
                "Print JSON: key, quorum, holder (the value held on a quorum, or null) and "
                "per node: node, reachable, state, holder, remaining_ttl_ms, error, latency_us");
  app->add_option("KEY", args->key, "Name of the lock")->required();
  add_global_options(*app, globals);
  app->footer(
      "Exit codes: 0 a quorum of nodes answered (whether or not the lock is held);\n"
      "2 usage error; 3 fewer nodes than the quorum answered.\n"
      "\n"
      "Example:\n"
      "  redlock status --json nightly-backup | jq -r .holder");
  return {app, [&globals, args] { return status(globals, *args); }};
}

}  // namespace redlock::cli
