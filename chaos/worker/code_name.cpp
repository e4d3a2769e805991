#include "worker/code_name.hpp"

#include <redlock/error.hpp>

namespace redlock::chaos {

std::string code_name(std::error_code code) {
  if (code.category() != redlock::category()) return code.message();
  switch (static_cast<redlock::errc>(code.value())) {
    case redlock::errc::conflict:
      return "conflict";
    case redlock::errc::quorum_unreachable:
      return "quorum_unreachable";
    case redlock::errc::validity_expired:
      return "validity_expired";
    case redlock::errc::timeout:
      return "timeout";
    case redlock::errc::cancelled:
      return "cancelled";
    case redlock::errc::invalid_argument:
      return "invalid_argument";
    case redlock::errc::connection_error:
      return "connection_error";
    case redlock::errc::protocol_error:
      return "protocol_error";
    case redlock::errc::auth_error:
      return "auth_error";
    case redlock::errc::redis_error:
      return "redis_error";
    case redlock::errc::not_held:
      return "not_held";
    case redlock::errc::lock_lost:
      return "lock_lost";
    case redlock::errc::stale_token:
      return "stale_token";
    case redlock::errc::overloaded:
      return "overloaded";
    case redlock::errc::tls_error:
      return "tls_error";
    case redlock::errc::wrong_kind:
      return "wrong_kind";
    case redlock::errc::hold_limit_reached:
      return "hold_limit_reached";
  }
  return code.message();
}

}  // namespace redlock::chaos
