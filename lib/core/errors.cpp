// The redlock error category, and the words used for node outcomes.

#include <string>

#include <redlock/error.hpp>

namespace redlock {
namespace {

class Category final : public std::error_category {
 public:
  const char* name() const noexcept override { return "redlock"; }
  std::string message(int code) const override {
    switch (static_cast<errc>(code)) {
      case errc::conflict:
        return "lock held by another owner";
      case errc::quorum_unreachable:
        return "quorum unreachable";
      case errc::validity_expired:
        return "quorum reached too late: no validity left";
      case errc::timeout:
        return "timed out";
      case errc::cancelled:
        return "cancelled";
      case errc::invalid_argument:
        return "invalid argument";
      case errc::connection_error:
        return "connection error";
      case errc::protocol_error:
        return "protocol error";
      case errc::auth_error:
        return "authentication failed";
      case errc::redis_error:
        return "redis error";
      case errc::not_held:
        return "lock not held";
      case errc::lock_lost:
        return "lock lost";
      case errc::stale_token:
        return "stale fencing token";
      case errc::overloaded:
        return "too many pending commands";
      case errc::tls_error:
        return "TLS error";
      case errc::wrong_kind:
        return "key in use as another kind of lock";
      case errc::hold_limit_reached:
        return "hold limit reached";
    }
    return "unknown redlock error " + std::to_string(code);
  }
};

}  // namespace

const std::error_category& category() noexcept {
  static const Category instance;
  return instance;
}

const char* to_string(NodeStatus status) noexcept {
  switch (status) {
    case NodeStatus::pending:
      return "no answer";
    case NodeStatus::granted:
      return "granted";
    case NodeStatus::held:
      return "held by another";
    case NodeStatus::not_held:
      return "not held";
    case NodeStatus::timeout:
      return "timeout";
    case NodeStatus::connection_error:
      return "connection error";
    case NodeStatus::redis_error:
      return "redis error";
    case NodeStatus::cancelled:
      return "cancelled";
  }
  return "unknown";
}

std::string describe(const NodeOutcome& outcome) {
  std::string text = outcome.node + ": " + to_string(outcome.status);
  if (outcome.status == NodeStatus::held && outcome.remaining_ttl.count() >= 0) {
    text += " (ttl " + std::to_string(outcome.remaining_ttl.count()) + " ms)";
  }
  if (!outcome.detail.empty()) text += " (" + outcome.detail + ")";
  return text;
}

}  // namespace redlock
