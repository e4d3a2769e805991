#include "worker/foreign_client.hpp"

#include <hiredis/hiredis.h>

#include <atomic>
#include <memory>
#include <random>
#include <thread>

namespace redlock::chaos {

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

struct ContextFree {
  void operator()(redisContext* context) const { redisFree(context); }
};
using Context = std::unique_ptr<redisContext, ContextFree>;

struct ReplyFree {
  void operator()(redisReply* reply) const { freeReplyObject(reply); }
};
using Reply = std::unique_ptr<redisReply, ReplyFree>;

// One node; reconnects after any error, as a client library would.
class ForeignNode {
 public:
  explicit ForeignNode(const std::string& url) {
    const auto hostport = url.substr(url.find("://") + 3);
    const auto colon = hostport.rfind(':');
    host_ = hostport.substr(0, colon);
    port_ = std::stoi(hostport.substr(colon + 1));
  }

  // nullptr on any failure (timeout, connection error).
  Reply command(const std::vector<std::string>& argv) {
    if (!context_ && !connect()) return nullptr;
    std::vector<const char*> args;
    std::vector<std::size_t> lengths;
    for (const auto& arg : argv) {
      args.push_back(arg.data());
      lengths.push_back(arg.size());
    }
    Reply reply(static_cast<redisReply*>(redisCommandArgv(
        context_.get(), static_cast<int>(args.size()), args.data(), lengths.data())));
    if (!reply) context_.reset();  // the stream is in an unknown state
    return reply;
  }

 private:
  bool connect() {
    const timeval timeout{0, 50'000};
    context_.reset(redisConnectWithTimeout(host_.c_str(), port_, timeout));
    if (!context_ || context_->err) {
      context_.reset();
      return false;
    }
    redisSetTimeout(context_.get(), timeout);
    return true;
  }

  std::string host_;
  int port_ = 0;
  Context context_;
};

std::int64_t to_ns(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

constexpr const char* release_script =
    "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end "
    "return 0";

}  // namespace

void run_foreign_client(const ForeignSettings& settings, const std::string& name, EventLog& log,
                        const std::atomic<bool>& stop) {
  std::vector<ForeignNode> nodes;
  for (const auto& url : settings.nodes) nodes.emplace_back(url);
  const int quorum = static_cast<int>(nodes.size()) / 2 + 1;
  std::mt19937_64 random(settings.seed);
  std::uniform_int_distribution<int> pick(0, settings.keys - 1);
  std::uniform_int_distribution<int> jitter(0, 40);
  const auto end = Clock::now() + settings.duration;
  const auto drift = milliseconds(settings.ttl.count() / 100 + 2);
  auto sleep_until = [&](Clock::time_point until) {
    while (!stop && Clock::now() < until) std::this_thread::sleep_for(milliseconds(5));
  };
  while (!stop && Clock::now() < end) {
    const std::string key = settings.prefix + std::to_string(pick(random));
    const auto wait_until = Clock::now() + settings.wait;
    bool held = false;
    while (!stop && !held && Clock::now() < wait_until) {
      const std::string value = name + ":" + std::to_string(random());
      const auto start = Clock::now();
      int grants = 0;
      for (auto& node : nodes) {
        auto reply =
            node.command({"SET", key, value, "NX", "PX", std::to_string(settings.ttl.count())});
        if (reply && reply->type == REDIS_REPLY_STATUS) ++grants;
      }
      const auto valid_until = start + settings.ttl - drift;
      const auto acquired_at = Clock::now();
      if (grants >= quorum && acquired_at < valid_until) {
        held = true;
        // Both ends are the instants themselves: an interval measured from a later clock
        // reading (after the attempt record's write, which can take a while on a loaded
        // machine) would reach past the release and overlap this thread's next hold.
        const std::int64_t from = to_ns(acquired_at);
        log.append(AttemptEvent{key, name, AttemptResult::acquired, "", from});
        sleep_until(std::min(acquired_at + settings.hold, valid_until));
        const std::int64_t to = to_ns(std::min(Clock::now(), valid_until));
        log.append(HoldEvent{key, name, value, from, to, std::nullopt});
      } else {
        log.append(AttemptEvent{key, name, AttemptResult::conflict, "", monotonic_ns()});
      }
      // Released everywhere, held or not; nothing is published.
      for (auto& node : nodes) node.command({"EVAL", release_script, "1", key, value});
      if (!held) sleep_until(Clock::now() + milliseconds(40 + jitter(random)));
    }
  }
}

}  // namespace redlock::chaos
