// redlock status: what KEY is and who holds it on each node, and for how long, so that
// "why can't I get this lock" is answered without redis-cli on five machines. Every kind
// of lock is shown: an exclusive lock's holder, a semaphore's permit holders, a
// read-write lock's readers, writer and waiting writers.

#include <algorithm>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "exit_codes.hpp"
#include "report.hpp"
#include "subcommands.hpp"

namespace redlock::cli {

namespace {

using nlohmann::ordered_json;

struct StatusArguments {
  std::string key;
  bool json = false;
};

bool answered(const NodeView& view) {
  return view.kind != LockKind::unknown;
}

/// Stable one-word states for scripts (NodeStatus' own words are for people).
const char* state_of(const NodeView& view) {
  if (view.kind == LockKind::other) return "not_a_lock";
  switch (view.outcome.status) {
    case NodeStatus::held:
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

std::string cause_of(const NodeOutcome& node) {
  std::string text = to_string(node.status);
  if (!node.detail.empty()) text += ": " + node.detail;
  return text;
}

/// The kind the answering nodes agree on: "none" when no node has the key, "mixed" when
/// nodes disagree (a key reused as another kind while old holders live on).
std::string kind_of(const std::vector<NodeView>& views) {
  std::set<LockKind> kinds;
  for (const auto& view : views) {
    if (answered(view) && view.kind != LockKind::none) kinds.insert(view.kind);
  }
  if (kinds.empty()) return to_string(LockKind::none);
  if (kinds.size() > 1) return "mixed";
  return to_string(*kinds.begin());
}

/// One holder and on how many nodes it is live.
struct HolderSpread {
  HolderRole role;
  std::string value;
  int nodes = 0;
};

/// Every holder live on some node, in the order the nodes list them.
std::vector<HolderSpread> spread_of(const std::vector<NodeView>& views) {
  std::vector<HolderSpread> spread;
  for (const auto& view : views) {
    for (const auto& holder : view.holders) {
      auto known = std::find_if(spread.begin(), spread.end(), [&](const HolderSpread& each) {
        return each.role == holder.role && each.value == holder.value;
      });
      if (known == spread.end())
        known = spread.insert(spread.end(), HolderSpread{holder.role, holder.value, 0});
      ++known->nodes;
    }
  }
  std::stable_sort(spread.begin(), spread.end(), [](const auto& a, const auto& b) {
    return static_cast<int>(a.role) < static_cast<int>(b.role);
  });
  return spread;
}

/// The exclusive lock's value held on at least `quorum` nodes: the owner as far as
/// Redlock is concerned.
std::optional<HolderSpread> quorum_owner(const std::vector<HolderSpread>& spread, int quorum) {
  for (const auto& holder : spread) {
    if (holder.role == HolderRole::owner && holder.nodes >= quorum) return holder;
  }
  return std::nullopt;
}

ordered_json ttl_json(std::chrono::milliseconds ttl) {
  return ttl.count() >= 0 ? ordered_json(ttl.count()) : ordered_json(nullptr);
}

std::string as_json(const std::string& key, const std::vector<NodeView>& views, int quorum) {
  ordered_json nodes = ordered_json::array();
  for (const auto& view : views) {
    const auto& node = view.outcome;
    const bool owned = view.kind == LockKind::exclusive && node.status == NodeStatus::held;
    ordered_json holders = ordered_json::array();
    for (const auto& holder : view.holders) {
      holders.push_back({{"role", to_string(holder.role)},
                         {"value", holder.value},
                         {"remaining_ttl_ms", ttl_json(holder.remaining_ttl)}});
    }
    nodes.push_back({
        {"node", node.node},
        {"reachable", answered(view)},
        {"kind", to_string(view.kind)},
        {"state", state_of(view)},
        {"holder", owned ? ordered_json(node.holder) : ordered_json(nullptr)},
        {"remaining_ttl_ms", owned ? ttl_json(node.remaining_ttl) : ordered_json(nullptr)},
        {"holders", holders},
        {"error", answered(view) && view.kind != LockKind::other ? ordered_json(nullptr)
                                                                 : ordered_json(cause_of(node))},
        {"latency_us", node.latency.count()},
        {"served_by",
         view.served_by.empty() ? ordered_json(nullptr) : ordered_json(view.served_by)},
        {"guard", view.guard.empty() ? ordered_json(nullptr) : ordered_json(view.guard)},
    });
  }
  const auto spread = spread_of(views);
  ordered_json holders = ordered_json::array();
  for (const auto& holder : spread) {
    holders.push_back(
        {{"role", to_string(holder.role)}, {"value", holder.value}, {"nodes", holder.nodes}});
  }
  const auto owner = quorum_owner(spread, quorum);
  return ordered_json{{"key", key},
                      {"kind", kind_of(views)},
                      {"quorum", quorum},
                      {"holder", owner ? ordered_json(owner->value) : ordered_json(nullptr)},
                      {"holders", holders},
                      {"nodes", nodes}}
             .dump(2) +
         "\n";
}

/// "no reader", "1 reader", "2 readers".
std::string count_of(const std::vector<HolderSpread>& spread, HolderRole role,
                     const std::string& noun) {
  const auto n = std::count_if(spread.begin(), spread.end(),
                               [&](const HolderSpread& holder) { return holder.role == role; });
  if (n == 0) return "no " + noun;
  return std::to_string(n) + " " + noun + (n > 1 ? "s" : "");
}

/// What the key is, in one phrase: "held by V on 4 of 5 nodes", "semaphore: 2 permit
/// holders", "read-write lock: 2 readers, no writer".
std::string headline(const std::vector<NodeView>& views, const std::vector<HolderSpread>& spread,
                     int quorum) {
  const auto kind = kind_of(views);
  const auto total = std::to_string(views.size());
  if (kind == to_string(LockKind::none)) return "free on every node that answered";
  if (kind == to_string(LockKind::exclusive)) {
    const auto owner = quorum_owner(spread, quorum);
    if (!owner) return "not held by any value on a quorum";
    return "held by " + owner->value + " on " + std::to_string(owner->nodes) + " of " + total +
           " nodes";
  }
  if (kind == to_string(LockKind::semaphore)) {
    return "semaphore: " + count_of(spread, HolderRole::permit, "permit holder");
  }
  if (kind == to_string(LockKind::read_write)) {
    auto text = "read-write lock: " + count_of(spread, HolderRole::reader, "reader") + ", " +
                count_of(spread, HolderRole::writer, "writer");
    if (std::any_of(spread.begin(), spread.end(),
                    [](const auto& holder) { return holder.role == HolderRole::intent; })) {
      text += ", a writer waits";
    }
    return text;
  }
  if (kind == to_string(LockKind::other)) return "not a lock of this library";
  return "in use as different kinds of lock on different nodes";
}

std::string as_table(const std::string& key, const std::vector<NodeView>& views, int quorum) {
  const auto spread = spread_of(views);
  const auto total = std::to_string(views.size());
  const auto reachable = std::count_if(views.begin(), views.end(), answered);
  std::string text = "key \"" + key + "\": " + headline(views, spread, quorum) + " (quorum " +
                     std::to_string(quorum) + ", " + std::to_string(reachable) + " of " + total +
                     " nodes answered)\n";
  // The exclusive lock's one holder is in the headline already.
  if (kind_of(views) != to_string(LockKind::exclusive)) {
    for (const auto& holder : spread) {
      text += "  " + std::string(to_string(holder.role)) + " " + holder.value + " on " +
              std::to_string(holder.nodes) + " of " + total + " nodes\n";
    }
  }

  std::size_t width = 4;
  for (const auto& view : views) width = std::max(width, view.outcome.node.size());
  auto row = [&](const std::string& node, const std::string& state, const std::string& role,
                 const std::string& ttl, const std::string& holder_or_cause) {
    char line[64];
    std::snprintf(line, sizeof line, "  %-16s %-7s %-10s ", state.c_str(), role.c_str(),
                  ttl.c_str());
    text += node + std::string(width - node.size(), ' ') + line + holder_or_cause + "\n";
  };
  row("NODE", "STATE", "ROLE", "TTL", "HOLDER");
  for (const auto& view : views) {
    const auto& node = view.outcome;
    if (view.holders.empty()) {
      const bool quiet = answered(view) && view.kind != LockKind::other;
      row(node.node, state_of(view), "-", "-", quiet ? "-" : cause_of(node));
    } else {
      bool first = true;
      for (const auto& holder : view.holders) {
        row(first ? node.node : "", first ? state_of(view) : "", to_string(holder.role),
            holder.remaining_ttl.count() >= 0 ? std::to_string(holder.remaining_ttl.count()) + "ms"
                                              : "none",
            holder.value);
        first = false;
      }
    }
    // A Sentinel group's row says which master answered for it.
    if (!view.served_by.empty()) text += "  served by " + view.served_by + "\n";
    // A member that restarted or failed over: its grants do not count yet.
    if (!view.guard.empty()) text += "  " + view.guard + "\n";
  }
  return text;
}

int status(const GlobalOptions& globals, const StatusArguments& args) {
  auto client = globals.make_client();
  auto views = client->inspect(args.key);
  if (!views) {
    report_failure("status \"" + args.key + "\"", views.error(), client->quorum());
    return exit_code_for(views.error());
  }
  const int quorum = client->quorum();
  const auto text =
      args.json ? as_json(args.key, *views, quorum) : as_table(args.key, *views, quorum);
  std::fputs(text.c_str(), stdout);
  const auto reachable = std::count_if(views->begin(), views->end(), answered);
  if (reachable < quorum) {
    // Too few answers to tell whether the lock is held: a script must not read "free"
    // into that.
    report("status \"" + args.key + "\": only " + std::to_string(reachable) + " of " +
           std::to_string(views->size()) + " nodes answered (quorum " + std::to_string(quorum) +
           ")");
    for (const auto& view : *views) {
      if (!answered(view)) report("  " + describe(view.outcome));
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
      "Show KEY on every node, whatever kind of lock it is: reachable or not, and each "
      "holder (an exclusive lock's owner, permit holders, readers, the writer, waiting "
      "writers) with its remaining TTL.");
  app->add_flag("--json", args->json,
                "Print JSON: key, kind, quorum, holder (an exclusive lock's value held on a "
                "quorum, or null), holders (role, value, nodes) and per node: node, reachable, "
                "kind, state, holder, remaining_ttl_ms, holders, error, latency_us");
  app->add_option("KEY", args->key, "Name of the lock")->required();
  add_global_options(*app, globals);
  app->footer(
      "Exit codes: 0 a quorum of nodes answered (whether or not the lock is held);\n"
      "2 usage error; 3 fewer nodes than the quorum answered.\n"
      "\n"
      "Example:\n"
      "  redlock status --json nightly-backup | jq -r .holder\n"
      "  redlock status --json ledger | jq -r '.holders[] | select(.role == \"reader\") | .value'");
  return {app, [&globals, args] { return status(globals, *args); }};
}

}  // namespace redlock::cli
