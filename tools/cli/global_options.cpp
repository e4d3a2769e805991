#include "global_options.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string_view>

#include "duration.hpp"
#include "exit_codes.hpp"

namespace redlock::cli {

namespace {

constexpr const char* group = "Global options (before or after the subcommand)";

// A Sentinel group's URL lists its sentinels with commas too
// ("redis-sentinel://s1:26379,s2:26379/name"): until its name begins, a piece with no
// scheme continues it. So does a cluster's list of seeds ("redis-cluster://s1:7000,s2:7000"),
// which nothing ends.
bool continues_address_list(const std::vector<std::string>& urls, const std::string& piece) {
  if (urls.empty() || piece.find("://") != std::string::npos) return false;
  const std::string& previous = urls.back();
  const auto scheme_end = previous.find("://");
  if (scheme_end == std::string::npos) return false;
  std::string scheme = previous.substr(0, scheme_end);
  for (char& c : scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (scheme == "redis-cluster" || scheme == "rediss-cluster") return true;
  return (scheme == "redis-sentinel" || scheme == "rediss-sentinel") &&
         previous.find('/', scheme_end + 3) == std::string::npos;
}

std::vector<std::string> split_urls(const std::string& text) {
  std::vector<std::string> urls;
  std::size_t start = 0;
  while (start <= text.size()) {
    auto end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    auto url = text.substr(start, end - start);
    // Tolerate the spaces of "a, b" and a trailing comma; the library judges the rest.
    const auto first = url.find_first_not_of(" \t");
    const auto last = url.find_last_not_of(" \t");
    if (first != std::string::npos) {
      url = url.substr(first, last - first + 1);
      if (continues_address_list(urls, url)) {
        urls.back() += "," + url;
      } else {
        urls.push_back(url);
      }
    }
    start = end + 1;
  }
  return urls;
}

}  // namespace

CLI::Validator duration_check() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        try {
          (void)parse_duration(text);
          return {};
        } catch (const std::invalid_argument& e) {
          return e.what();
        }
      },
      "");
}

std::chrono::milliseconds GlobalOptions::ttl_ms() const {
  return parse_duration(ttl);
}

std::chrono::milliseconds GlobalOptions::longest_ttl_ms() const {
  if (!longest_ttl.empty()) return parse_duration(longest_ttl);
  return std::max(ttl_ms(), default_longest_ttl);
}

std::shared_ptr<Client> GlobalOptions::make_client() const {
  std::string list = nodes;
  if (list.empty()) {
    if (const char* env = std::getenv("REDLOCK_NODES")) list = env;
  }
  Options options;
  options.nodes = split_urls(list);
  if (options.nodes.empty()) {
    throw UsageError("no nodes: pass --nodes redis://HOST:PORT,... or set REDLOCK_NODES");
  }
  // Kept off the command line, where other users of the machine could read them.
  if (const char* env = std::getenv("REDLOCK_SENTINEL_USERNAME")) options.sentinel_username = env;
  if (const char* env = std::getenv("REDLOCK_SENTINEL_PASSWORD")) options.sentinel_password = env;
  options.quorum = quorum;
  if (!node_timeout.empty()) options.node_timeout = parse_duration(node_timeout);
  // A process that lives for one command never sees a member restart: the young-member
  // rule is what guards it, so it is on by default, and its bound must be known before
  // the first INFO answers. The bound covers the fleet's locks, not only this command's:
  // another client's key lost in a restart lives as long as that client's ttl.
  options.member_guard.young_on_first_contact = guard_young;
  options.member_guard.longest_ttl = longest_ttl_ms();
  options.member_guard.replicas_to_ack = replicas_to_ack;
  options.member_guard.allow_two_masters = allow_two_masters;
  options.tls.ca_file = tls_ca;
  options.tls.cert_file = tls_cert;
  options.tls.key_file = tls_key;
  options.tls.server_name = tls_server_name;
  options.tls.insecure_skip_verify = tls_insecure;
  if (verbose > 0) {
    options.log_level = verbose > 1 ? LogLevel::debug : LogLevel::info;
    // One fprintf per line: stderr is unbuffered, so lines of the loop thread and of the
    // main thread do not interleave within a line.
    options.log = [](LogLevel level, std::string_view line) {
      std::fprintf(stderr, "redlock: %s: %.*s\n", to_string(level), static_cast<int>(line.size()),
                   line.data());
    };
  }
  try {
    return Client::create(std::move(options));
  } catch (const std::invalid_argument& e) {
    std::string message = e.what();
    // The library names its options; here they are flags.
    if (message.find("member_guard.allow_two_masters") != std::string::npos) {
      message += "; here: --replicas-to-ack N, --quorum Q or --allow-two-masters";
    }
    throw UsageError(message);
  }
}

void add_global_options(CLI::App& app, GlobalOptions& options) {
  app.add_option("--nodes", options.nodes,
                 "Redis masters, comma-separated: redis://[user:pass@]host:port[/db], "
                 "rediss://..., unix:///path, or Sentinel groups "
                 "redis-sentinel://[user:pass@]host:port,host:port.../name[/db] (sentinels' "
                 "credentials: $REDLOCK_SENTINEL_USERNAME, $REDLOCK_SENTINEL_PASSWORD), or "
                 "Redis Clusters redis-cluster://[user:pass@]host:port,host:port... "
                 "(default: $REDLOCK_NODES)")
      ->type_name("URL,URL,...")
      ->group(group);
  app.add_option("--ttl", options.ttl, "Time to live of the lock on each node")
      ->check(duration_check())
      ->type_name("DURATION")
      ->capture_default_str()
      ->group(group);
  app.add_option("--node-timeout", options.node_timeout,
                 "Deadline of one command on one node (default: min(50ms, ttl/10))")
      ->check(duration_check())
      ->type_name("DURATION")
      ->group(group);
  app.add_option("--longest-ttl", options.longest_ttl,
                 "Longest ttl any client of the fleet uses: how long a member that may have "
                 "lost its keys is not counted (default: the longer of --ttl and 30s, the "
                 "library's default ttl)")
      ->check(duration_check())
      ->type_name("DURATION")
      ->group(group);
  app.add_flag_callback(
         "--no-guard-young-members", [&options] { options.guard_young = false; },
         "Count a member up for less than --longest-ttl when first met. By default such a "
         "member is not counted, since it may have restarted without its keys and a "
         "command this short never sees a restart otherwise; the cost is that for "
         "--longest-ttl after a whole fleet starts fresh every lock is refused as guarded. "
         "For a fleet started on purpose just now, or whose nodes keep their keys "
         "(docs/safety.md)")
      ->group(group);
  // The default now; still accepted from scripts written when it had to be asked for.
  app.add_flag_callback("--guard-young-members", [] {})->group("");
  app.add_option("--replicas-to-ack", options.replicas_to_ack,
                 "Count a member's grant only when N of its replicas acknowledged it (WAIT N "
                 "sent behind it; default: 0, none)")
      ->type_name("N")
      ->check(CLI::NonNegativeNumber)
      ->group(group);
  app.add_flag("--allow-two-masters", options.allow_two_masters,
               "Accept Sentinel group members without --replicas-to-ack or a quorum of "
               "(N+2)/2: a group with two masters after a failover votes twice, which a "
               "majority does not absorb; for servers set with min-replicas-to-write "
               "(docs/safety.md)")
      ->group(group);
  app.add_option("--quorum", options.quorum, "Nodes that must agree (default: a majority)")
      ->type_name("N")
      ->check(CLI::NonNegativeNumber)
      ->group(group);
  app.add_option("--tls-ca", options.tls_ca, "CA bundle (PEM) for rediss:// nodes")
      ->type_name("FILE")
      ->group(group);
  app.add_option("--tls-cert", options.tls_cert, "Client certificate (PEM)")
      ->type_name("FILE")
      ->group(group);
  app.add_option("--tls-key", options.tls_key, "Private key of the client certificate")
      ->type_name("FILE")
      ->group(group);
  app.add_option("--tls-server-name", options.tls_server_name,
                 "Name to verify and send as SNI (default: the URL's host)")
      ->type_name("NAME")
      ->group(group);
  app.add_flag("--tls-insecure", options.tls_insecure,
               "Skip certificate verification (testing only)")
      ->group(group);
  app.add_flag("-v,--verbose", options.verbose,
               "Log what the library sees on stderr: nodes down and back with the cause, "
               "watchdog failures, a lost lock; twice (-vv) also every attempt, wake, "
               "extension and release")
      ->group(group);
}

}  // namespace redlock::cli
