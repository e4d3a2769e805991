#include "tally.hpp"

#include <redlock/error.hpp>

namespace redlock_bench {

void Tally::merge(const Tally& other) {
  attempts += other.attempts;
  cycles += other.cycles;
  failures += other.failures;
  release_failures += other.release_failures;
  acquire_ok.append(other.acquire_ok);
  acquire_fail.append(other.acquire_fail);
  release.append(other.release);
  cycle.append(other.cycle);
  for (const auto& [kind, count] : other.error_kinds) error_kinds[kind] += count;
  cycles_by_worker.insert(cycles_by_worker.end(), other.cycles_by_worker.begin(),
                          other.cycles_by_worker.end());
}

std::size_t Tally::sample_bytes() const {
  return acquire_ok.bytes() + acquire_fail.bytes() + release.bytes() + cycle.bytes();
}

std::string error_kind(std::error_code code) {
  if (code.category() != redlock::category())
    return code.category().name() + std::string(":") + std::to_string(code.value());
  using redlock::errc;
  switch (static_cast<errc>(code.value())) {
    case errc::conflict:
      return "conflict";
    case errc::quorum_unreachable:
      return "quorum_unreachable";
    case errc::validity_expired:
      return "validity_expired";
    case errc::timeout:
      return "timeout";
    case errc::cancelled:
      return "cancelled";
    case errc::invalid_argument:
      return "invalid_argument";
    case errc::connection_error:
      return "connection_error";
    case errc::protocol_error:
      return "protocol_error";
    case errc::auth_error:
      return "auth_error";
    case errc::redis_error:
      return "redis_error";
    case errc::not_held:
      return "not_held";
    case errc::lock_lost:
      return "lock_lost";
    case errc::stale_token:
      return "stale_token";
    case errc::overloaded:
      return "overloaded";
    case errc::tls_error:
      return "tls_error";
    case errc::wrong_kind:
      return "wrong_kind";
    case errc::hold_limit_reached:
      return "hold_limit_reached";
  }
  return "redlock:" + std::to_string(code.value());
}

}  // namespace redlock_bench
