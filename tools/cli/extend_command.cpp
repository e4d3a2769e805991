// redlock extend: push back the expiry of a lock taken by `redlock acquire`.

#include <cstdio>
#include <memory>
#include <string>

#include "exit_codes.hpp"
#include "report.hpp"
#include "subcommands.hpp"

namespace redlock::cli {

namespace {

struct ExtendArguments {
  std::string key;
  std::string value;
};

int extend(const GlobalOptions& globals, const ExtendArguments& args) {
  auto client = globals.make_client();
  auto validity = client->extend(args.key, args.value, globals.ttl_ms());
  if (!validity) {
    report_failure("extend \"" + args.key + "\"", validity.error(), client->quorum());
    return exit_code_for(validity.error());
  }
  std::printf("validity_ms %lld\n", static_cast<long long>(validity->count()));
  return exit_code::ok;
}

}  // namespace

Subcommand add_extend_command(CLI::App& parent, GlobalOptions& globals) {
  auto args = std::make_shared<ExtendArguments>();
  auto* app = parent.add_subcommand(
      "extend",
      "Reset the TTL of the lock KEY to --ttl if VALUE still holds it on a quorum; prints "
      "the new validity in ms. An expired lock is never revived.");
  app->add_option("KEY", args->key, "Name of the lock")->required();
  app->add_option("VALUE", args->value, "The value printed by redlock acquire")->required();
  add_global_options(*app, globals);
  app->footer(
      "Exit codes: 0 extended; 1 VALUE does not hold the lock on a quorum; 2 usage error;\n"
      "3 quorum unreachable.\n"
      "\n"
      "Example:\n"
      "  redlock extend --ttl 5m deploy 5f0c9a61d2b84e6e9c3b7a1f00d4e2c8");
  return {app, [&globals, args] { return extend(globals, *args); }};
}

}  // namespace redlock::cli
