// Runs against the nodes in REDLOCK_NODES with the installed library: the shared object
// it loads must be the version its headers name, a lock must be held on every node,
// a second client must be refused while it is held and granted once it is released.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>

#include <redlock/redlock.hpp>

using namespace std::chrono_literals;

namespace {

int fail(const char* what, const std::string& detail = {}) {
  std::printf("FAIL: %s %s\n", what, detail.c_str());
  return 1;
}

}  // namespace

int main() {
  if (std::strcmp(redlock::version(), REDLOCK_VERSION_STRING) != 0) {
    return fail("library version differs from the headers':", redlock::version());
  }
  const char* env = std::getenv("REDLOCK_NODES");
  if (env == nullptr) return fail("REDLOCK_NODES is not set");
  redlock::Options options;
  std::stringstream list(env);
  for (std::string url; std::getline(list, url, ',');) options.nodes.push_back(url);
  // Generous: this checks linking and behaviour, not speed, and a loaded machine must
  // not turn a slow first connection into a node that missed the lock.
  options.node_timeout = 1s;

  auto first = redlock::Client::create(options);
  auto second = redlock::Client::create(options);
  redlock::LockOptions lock_options;
  lock_options.ttl = 10s;
  lock_options.wait = 2s;
  lock_options.fencing = true;
  auto lock = first->lock("package:consumer", lock_options);
  if (!lock) return fail("lock:", lock.error().message());
  // Every node holds it, the ones answering after the quorum decided included: asked by
  // the same client, whose status reaches each node behind that node's acquire.
  auto status = first->status("package:consumer");
  if (!status) return fail("status:", status.error().message());
  int holding = 0;
  for (const auto& node : *status) holding += node.holder == lock->value();
  if (holding != static_cast<int>(options.nodes.size())) {
    return fail("not every node holds the lock:", std::to_string(holding));
  }

  auto refused = second->try_lock("package:consumer", 10s);
  if (refused || refused.error() != redlock::errc::conflict) {
    return fail("a second client was not refused with errc::conflict");
  }
  if (auto unlocked = lock->unlock(); !unlocked) return fail("unlock:", unlocked.error().message());
  auto next = second->try_lock("package:consumer", 10s);
  if (!next) return fail("the released lock was not granted:", next.error().message());

  std::printf("ok: redlock %s, %d nodes held the lock, token %llu, then the second client got it\n",
              redlock::version(), holding,
              static_cast<unsigned long long>(lock->fencing_token().value_or(0)));
  return 0;
}
