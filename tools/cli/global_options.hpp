#pragma once
// The options every subcommand shares: where the nodes are, the TTL, per-node timeout,
// quorum and TLS. They are accepted before or after the subcommand name.

#include <CLI/CLI.hpp>
#include <chrono>
#include <memory>
#include <string>

#include <redlock/client.hpp>

namespace redlock::cli {

struct GlobalOptions {
  std::string nodes;  ///< Comma-separated URLs; REDLOCK_NODES when empty.
  std::string ttl = "30s";
  std::string node_timeout;  ///< Empty: the library's min(50ms, ttl/10).
  /// Options::member_guard: the fleet's longest ttl (empty: the longer of --ttl and
  /// default_longest_ttl), and the young-member rule on first contact (on unless
  /// --no-guard-young-members).
  std::string longest_ttl;
  bool guard_young = true;
  /// Options::member_guard.replicas_to_ack: WAIT R behind every grant (0: none).
  int replicas_to_ack = 0;
  /// Options::member_guard.allow_two_masters.
  bool allow_two_masters = false;
  int quorum = 0;  ///< 0: a majority.
  std::string tls_ca;
  std::string tls_cert;
  std::string tls_key;
  std::string tls_server_name;
  bool tls_insecure = false;
  /// --verbose: 1 = the library's info lines and above on stderr, 2 = debug too.
  int verbose = 0;

  /// What --longest-ttl is when not given, unless --ttl is longer: the library's default
  /// ttl, which its own default guard bound assumes of a fleet too.
  static constexpr std::chrono::milliseconds default_longest_ttl{30'000};

  std::chrono::milliseconds ttl_ms() const;
  /// --longest-ttl, or the longer of --ttl and default_longest_ttl.
  std::chrono::milliseconds longest_ttl_ms() const;
  /// Builds and starts the client. Throws UsageError when no node is given or the
  /// library refuses the options (its message names the bad field or URL).
  std::shared_ptr<Client> make_client() const;
};

/// Adds the shared options to `app` (the top level or a subcommand), under a heading
/// of their own, all bound to `options`.
void add_global_options(CLI::App& app, GlobalOptions& options);

/// A CLI11 check that accepts what parse_duration() accepts.
CLI::Validator duration_check();

}  // namespace redlock::cli
