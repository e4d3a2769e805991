// redlock leader: who leads the election KEY (`redlock elect`), as a quorum of nodes says;
// with --watch, one line per change of leader until interrupted.

#include <poll.h>
#include <signal.h>

#include <cerrno>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stop_token>
#include <string>
#include <system_error>
#include <thread>

#include <redlock/election.hpp>

#include "exit_codes.hpp"
#include "report.hpp"
#include "signal_watch.hpp"
#include "subcommands.hpp"

namespace redlock::cli {

namespace {

struct LeaderArguments {
  std::string key;
  bool json = false;
  bool watch = false;
};

std::string describe_leader(const std::string& key, const std::optional<Leader>& leader,
                            bool json) {
  if (json) {
    nlohmann::ordered_json object{{"key", key}};
    if (leader) {
      object["leader"] = nlohmann::ordered_json{{"identity", leader->identity},
                                                {"term", leader->term},
                                                {"validity_ms", leader->validity.count()},
                                                {"value", leader->value}};
    } else {
      object["leader"] = nullptr;
    }
    return object.dump() + "\n";
  }
  if (!leader) return "none\n";
  return leader->identity + " term " + std::to_string(leader->term) + " validity_ms " +
         std::to_string(leader->validity.count()) + "\n";
}

bool print(const std::string& text) {
  return std::fputs(text.c_str(), stdout) != EOF && std::fflush(stdout) == 0;
}

int leader(const GlobalOptions& globals, const LeaderArguments& args) {
  // Before the client, whose loop thread inherits the blocked mask: --watch ends on them.
  std::optional<SignalWatch> signals;
  if (args.watch) signals.emplace(std::initializer_list<int>{SIGINT, SIGTERM, SIGHUP});
  auto client = globals.make_client();
  // A reader never campaigns: its identity and ttl only pace observe().
  Election election(client, args.key, "reader", globals.ttl_ms());
  const std::string what = "leader \"" + args.key + "\"";
  if (!args.watch) {
    auto seen = election.leader();
    if (!seen) {
      report_failure(what, seen.error(), client->quorum());
      return exit_code_for(seen.error());
    }
    if (!print(describe_leader(args.key, *seen, args.json))) return exit_code::output_error;
    return *seen ? exit_code::ok : exit_code::conflict;
  }

  std::stop_source stop;
  // Ends the watch on a signal. It looks at its own stop every 100 ms, so that it can be
  // joined when the watch ends by itself (a closed client, a broken pipe).
  std::jthread waiter([&](std::stop_token ended) {
    pollfd watched{signals->fd(), POLLIN, 0};
    while (!ended.stop_requested()) {
      if (::poll(&watched, 1, 100) < 0 && errno != EINTR) break;
      if (signals->next()) {
        stop.request_stop();
        return;
      }
    }
  });
  bool output_failed = false;
  auto watched = election.observe(stop.get_token(), [&](const std::optional<Leader>& leader) {
    if (!print(describe_leader(args.key, leader, args.json))) {
      output_failed = true;
      stop.request_stop();
    }
  });
  waiter.request_stop();
  if (output_failed) return exit_code::output_error;
  if (!watched) {
    report_failure(what, watched.error(), client->quorum());
    return exit_code_for(watched.error());
  }
  return exit_code::ok;
}

}  // namespace

Subcommand add_leader_command(CLI::App& parent, GlobalOptions& globals) {
  auto args = std::make_shared<LeaderArguments>();
  auto* app = parent.add_subcommand(
      "leader",
      "Print who leads the election KEY (`redlock elect`), as a quorum of nodes says: its "
      "identity, term and remaining validity, or \"none\".");
  app->add_flag("--json", args->json,
                "Print one JSON object: key, leader (identity, term, validity_ms, value, or "
                "null)");
  app->add_flag("--watch", args->watch,
                "Print a line now and one per change of leader, in term order, until "
                "SIGINT or SIGTERM (exit 0); read again when a campaign or a release is "
                "announced, and every third of --ttl (at most every second)");
  app->add_option("KEY", args->key, "Name of the election")->required();
  add_global_options(*app, globals);
  app->footer(
      "Exit codes: 0 a leader was printed (--watch: interrupted); 1 nobody leads; 2 usage "
      "error;\n3 quorum unreachable.");
  return {app, [&globals, args] { return leader(globals, *args); }};
}

}  // namespace redlock::cli
