// Client-level validation of Options: arbitrary node lists (raw strings and URLs built
// from parts, credentials included), quorum and the numeric fields, through the same
// Engine::create that Client::create calls. Its node factory makes inert nodes, so an
// accepted configuration starts the loop thread but never opens a socket: the fuzzer
// cannot reach a service on this machine, and each input stays fast and reproducible.
//
// Promises checked: creation either succeeds or throws std::invalid_argument (anything
// else escapes and crashes the run); a refusal never repeats a password; an accepted
// client has a quorum in [N/2+1, N] and node names without passwords.

#include <fuzzer/FuzzedDataProvider.h>

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "client/engine/engine.hpp"
#include "inert_node.hpp"
#include "member/node.hpp"

namespace {

using namespace std::chrono_literals;
using redlock::detail::InertNode;
using redlock::detail::Node;

// Every password the fuzzer writes starts with this, so a leak is a plain substring.
constexpr std::string_view secret = "Zs3cr3tPw";

[[noreturn]] void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_options: %s\n  %s\n", what, detail.c_str());
  std::abort();
}

std::unique_ptr<Node> make_inert(uv_loop_s*, redlock::net::ConnectionOptions options) {
  return std::make_unique<InertNode>(options.endpoint.display);
}

// A fuzzer-chosen string; `tainted` records whether it happens to contain the secret, in
// which case seeing the secret in a message or name proves nothing.
std::string random_text(FuzzedDataProvider& input, std::size_t max_length, bool& tainted) {
  std::string text = input.ConsumeRandomLengthString(max_length);
  if (text.find(secret) != std::string::npos) tainted = true;
  return text;
}

// What the password is follows from the grammar, not from how the fuzzer assembled the
// parts: a scheme ends at the first "://", so a secret before one is the scheme; and a
// unix URL's path starts at once after a leading '/', else at the first "@/", so a random
// part like "unix:///" (a user with no scheme written) makes the secret part of a path,
// which a refusal rightly quotes.
bool secret_outside_credentials(std::string_view url) {
  const std::size_t secret_at = url.find(secret);
  const std::size_t scheme_end = url.find("://");
  if (secret_at == std::string_view::npos || scheme_end == std::string_view::npos) return false;
  if (secret_at < scheme_end) return true;
  std::string scheme(url.substr(0, scheme_end));
  for (char& c : scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (scheme != "unix") return false;
  const std::string_view rest = url.substr(scheme_end + 3);
  const std::size_t path_at = rest.starts_with('/') ? 0 : rest.find("@/");
  return path_at != std::string_view::npos && secret_at - (scheme_end + 3) > path_at;
}

std::string built_url(FuzzedDataProvider& input, bool& tainted) {
  static constexpr const char* schemes[] = {"redis://", "rediss://", "REDIS://", "unix://", ""};
  static constexpr const char* hosts[] = {"127.0.0.1",      "localhost",       "LOCALHOST", "[::1]",
                                          "[fe80::1%25lo]", "redis-1.example", ""};
  std::string url = input.PickValueInArray(schemes);
  const bool unix_socket = url == "unix://";
  if (input.ConsumeBool()) {
    if (input.ConsumeBool()) {
      url += random_text(input, 8, tainted);
    }
    url += ':';
    url += secret;
    url += random_text(input, 8, tainted);
    url += '@';
  }
  if (unix_socket) {
    url += input.ConsumeBool() ? "/tmp/redis.sock" : random_text(input, 16, tainted);
  } else {
    url += input.ConsumeBool() ? std::string(input.PickValueInArray(hosts))
                               : random_text(input, 16, tainted);
    if (input.ConsumeBool()) url += ":" + std::to_string(input.ConsumeIntegralInRange(-1, 70000));
  }
  if (input.ConsumeBool()) {
    url += (unix_socket ? "?db=" : "/") + std::to_string(input.ConsumeIntegralInRange(-1, 20));
  }
  if (secret_outside_credentials(url)) tainted = true;
  return url;
}

std::chrono::milliseconds duration(FuzzedDataProvider& input) {
  return std::chrono::milliseconds(input.ConsumeIntegralInRange<std::int64_t>(-10, 100'000));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider input(data, size);
  redlock::Options options;
  bool tainted = false;
  const int count = input.ConsumeIntegralInRange(0, 7);
  for (int i = 0; i < count; ++i) {
    options.nodes.push_back(input.ConsumeBool() ? built_url(input, tainted)
                                                : random_text(input, 48, tainted));
  }
  options.quorum = input.ConsumeIntegralInRange(-2, 9);
  if (input.ConsumeBool()) {
    options.node_timeout = duration(input);
    options.connect_timeout = duration(input);
    options.drift_factor = input.ConsumeFloatingPoint<double>();
    options.drift_margin = duration(input);
    options.retry_delay = duration(input);
    options.retry_jitter = duration(input);
    options.reconnect_min = duration(input);
    options.reconnect_max = duration(input);
    options.max_pending_per_node = input.ConsumeIntegralInRange<std::size_t>(0, 8);
    options.max_key_bytes = input.ConsumeIntegralInRange<std::size_t>(0, 8);
  }
  if (input.ConsumeBool()) {
    options.username = random_text(input, 8, tainted);
    options.password = std::string(secret) + random_text(input, 8, tainted);
  }

  std::shared_ptr<redlock::detail::Engine> engine;
  try {
    engine = redlock::detail::Engine::create(options, make_inert);
  } catch (const std::invalid_argument& error) {
    const std::string message = error.what();
    if (!tainted && message.find(secret) != std::string::npos)
      fail("refusal repeats a password", message);
    if (message.empty()) fail("empty refusal", message);
    return 0;
  }
  const int n = static_cast<int>(options.nodes.size());
  if (engine->quorum() < n / 2 + 1 || engine->quorum() > n) {
    fail("quorum outside [N/2+1, N]",
         std::to_string(engine->quorum()) + " of " + std::to_string(n));
  }
  if (engine->node_names().size() != options.nodes.size()) fail("node count changed", "");
  for (const auto& name : engine->node_names()) {
    if (!tainted && name.find(secret) != std::string::npos)
      fail("node name shows a password", name);
  }
  engine->close();
  return 0;
}
