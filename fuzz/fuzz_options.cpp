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

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "client/engine.hpp"
#include "client/node.hpp"

namespace {

using namespace std::chrono_literals;
using redlock::detail::Node;
using redlock::detail::NodeCallback;

// Every password the fuzzer writes starts with this, so a leak is a plain substring.
constexpr std::string_view secret = "Zs3cr3tPw";

[[noreturn]] void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_options: %s\n  %s\n", what, detail.c_str());
  std::abort();
}

class InertNode final : public Node {
 public:
  explicit InertNode(std::string name) : name_(std::move(name)) {}
  const std::string& name() const noexcept override { return name_; }
  void acquire(std::string_view, std::string_view, std::chrono::milliseconds, bool,
               std::chrono::milliseconds, NodeCallback) override {}
  void release(std::string_view, std::string_view, std::chrono::milliseconds,
               NodeCallback) override {}
  void extend(std::string_view, std::string_view, std::chrono::milliseconds,
              std::chrono::milliseconds, NodeCallback) override {}
  void fence(std::string_view, std::string_view, std::uint64_t, std::chrono::milliseconds,
             NodeCallback) override {}
  void inspect(std::string_view, std::chrono::milliseconds, NodeCallback) override {}
  void close() override {}

 private:
  std::string name_;
};

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

std::string built_url(FuzzedDataProvider& input, bool& tainted) {
  static constexpr const char* schemes[] = {"redis://", "rediss://", "REDIS://", "unix://", ""};
  static constexpr const char* hosts[] = {"127.0.0.1",      "localhost",       "LOCALHOST", "[::1]",
                                          "[fe80::1%25lo]", "redis-1.example", ""};
  std::string url = input.PickValueInArray(schemes);
  const bool unix_socket = url == "unix://";
  if (input.ConsumeBool()) {
    if (input.ConsumeBool()) {
      const std::string user = random_text(input, 8, tainted);
      // In a unix URL the path starts at once after a leading '/', else at the first
      // "@/": a user like that turns the rest, secret included, into the path, where
      // showing it is right.
      if (unix_socket && (user.starts_with('/') || user.find("@/") != std::string::npos)) {
        tainted = true;
      }
      url += user;
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
  // A scheme ends at the first "://": a secret before one (a random part holding it, no
  // scheme written) is the scheme by the grammar, not a password.
  const std::size_t scheme_end = url.find("://");
  if (scheme_end != std::string::npos && url.find(secret) < scheme_end) tainted = true;
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
