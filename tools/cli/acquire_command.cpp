// redlock acquire: take the lock for a script that releases it later with
// `redlock release KEY VALUE`. The lock outlives this process by design.

#include <unistd.h>

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "duration.hpp"
#include "exit_codes.hpp"
#include "report.hpp"
#include "subcommands.hpp"

namespace redlock::cli {

namespace {

struct AcquireArguments {
  std::string key;
  std::string wait = "0s";
  bool fail_fast = false;
  bool json = false;
};

std::string describe_lock(const std::string& key, const Lock& lock, bool json) {
  // Always taken with fencing: the token is part of what acquire promises to print.
  const auto token = lock.fencing_token().value_or(0);
  if (json) {
    return nlohmann::ordered_json{{"key", key},
                                  {"value", lock.value()},
                                  {"validity_ms", lock.validity().count()},
                                  {"token", token}}
               .dump() +
           "\n";
  }
  return "value " + lock.value() + "\nvalidity_ms " + std::to_string(lock.validity().count()) +
         "\ntoken " + std::to_string(token) + "\n";
}

int acquire(const GlobalOptions& globals, const AcquireArguments& args) {
  LockOptions options;
  options.ttl = globals.ttl_ms();
  options.wait = parse_duration(args.wait);
  options.fencing = true;
  auto client = globals.make_client();
  options.fail_fast = args.fail_fast;
  // As in run: the wait covers an outage too, unless --fail-fast.
  auto acquired = client->lock(args.key, options);
  if (!acquired) {
    report_failure("acquire \"" + args.key + "\"", acquired.error(), client->quorum());
    return exit_code_for(acquired.error());
  }
  // The round was decided by the first majority. close() lets the members still
  // connecting (a Sentinel group still resolving its master) write the acquire first;
  // the others have it on their connections, which the exit ends with a FIN behind it.
  // So every member that answers gets the value, and the lock outlives the loss of one
  // of the first majority, without waiting for a member that is silent.
  const auto text = describe_lock(args.key, *acquired, args.json);
  if (std::fputs(text.c_str(), stdout) == EOF || std::fflush(stdout) != 0) {
    // Nobody learnt the value, so nobody could release the lock: give it back now
    // (the Lock's destructor) instead of leaving it held for a whole TTL.
    report("acquire \"" + args.key + "\": cannot write the lock's value to stdout");
    return exit_code::output_error;
  }
  // Holding the lock after we exit is the point of acquire: the client is closed first,
  // so the Lock's destructor sends no release (calls after close() are cancelled), and
  // the client's own destructor joins its loop thread. The nodes expire the lock after
  // the TTL unless `redlock extend` or `redlock release` comes first.
  client->close();
  return exit_code::ok;
}

}  // namespace

Subcommand add_acquire_command(CLI::App& parent, GlobalOptions& globals) {
  auto args = std::make_shared<AcquireArguments>();
  auto* app = parent.add_subcommand(
      "acquire",
      "Take the lock KEY and leave it held after exiting: prints its value (needed by "
      "release and extend), its validity in ms and its fencing token.");
  app->add_option("--wait", args->wait,
                  "Keep trying this long while the lock is held or no quorum of nodes is "
                  "reachable (see --fail-fast)")
      ->check(duration_check())
      ->type_name("DURATION")
      ->capture_default_str();
  app->add_flag("--fail-fast", args->fail_fast,
                "Exit 3 at the first attempt that finds no quorum of nodes reachable, instead "
                "of waiting through the outage");
  app->add_flag("--json", args->json, "Print one JSON object: key, value, validity_ms, token");
  app->add_option("KEY", args->key, "Name of the lock")->required();
  add_global_options(*app, globals);
  app->footer(
      "The lock expires after --ttl unless extended or released first.\n"
      "Exit codes: 0 acquired; 1 held by another; 2 usage error; 3 quorum unreachable.\n"
      "\n"
      "Example:\n"
      "  export REDLOCK_NODES=redis://10.0.0.1:6379,redis://10.0.0.2:6379,redis://10.0.0.3:6379\n"
      "  value=$(redlock acquire --ttl 5m deploy | awk '$1 == \"value\" {print $2}')\n"
      "  ... deploy ...\n"
      "  redlock release deploy \"$value\"");
  return {app, [&globals, args] { return acquire(globals, *args); }};
}

}  // namespace redlock::cli
