// redlock release: give back a lock taken by `redlock acquire`, checked by its value so
// that a holder whose lock expired cannot release its successor's.

#include <memory>
#include <string>

#include "exit_codes.hpp"
#include "report.hpp"
#include "subcommands.hpp"

namespace redlock::cli {

namespace {

struct ReleaseArguments {
  std::string key;
  std::string value;
};

int release(const GlobalOptions& globals, const ReleaseArguments& args) {
  auto client = globals.make_client();
  auto released = client->release(args.key, args.value);
  if (!released) {
    report_failure("release \"" + args.key + "\"", released.error(), client->quorum());
    return exit_code_for(released.error());
  }
  return exit_code::ok;
}

}  // namespace

Subcommand add_release_command(CLI::App& parent, GlobalOptions& globals) {
  auto args = std::make_shared<ReleaseArguments>();
  auto* app = parent.add_subcommand(
      "release", "Release the lock KEY if VALUE (printed by acquire) still holds it.");
  app->add_option("KEY", args->key, "Name of the lock")->required();
  app->add_option("VALUE", args->value, "The value printed by redlock acquire")->required();
  add_global_options(*app, globals);
  app->footer(
      "Exit codes: 0 released; 1 VALUE held it on no node (expired or never taken);\n"
      "2 usage error; 3 quorum unreachable (the lock expires by its TTL).\n"
      "\n"
      "Example:\n"
      "  redlock release deploy 5f0c9a61d2b84e6e9c3b7a1f00d4e2c8");
  return {app, [&globals, args] { return release(globals, *args); }};
}

}  // namespace redlock::cli
