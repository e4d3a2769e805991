// A Sentinel group: one server at a time, the master its sentinels name, which the
// connection resolves and follows (net/sentinel_resolution.hpp, net/sentinel_watch.hpp).
// What it adds to a server's kind is the name of the master it talks to now.

#include <memory>
#include <string>

#include "member/server_member.hpp"

namespace redlock::detail {

namespace {

class SentinelMember final : public ServerMember {
 public:
  // "master 'm' at 10.0.0.7:6380 (named by sentinel ...)", as its errors name it.
  std::string serving(const net::Connection& connection) const override {
    return connection.where();
  }
};

}  // namespace

std::unique_ptr<MemberKind> make_sentinel_member() {
  return std::make_unique<SentinelMember>();
}

}  // namespace redlock::detail
