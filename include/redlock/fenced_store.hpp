#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <redlock/export.hpp>
#include <redlock/options.hpp>
#include <redlock/result.hpp>

namespace redlock {

namespace detail {
class FencedStoreImpl;
}

/// Storage that refuses stale writers: a Redis (not one of the lock nodes) where each
/// write carries the writer's fencing token and is applied atomically only if the token is
/// >= the highest token already seen for that resource. The SQL form of the same rule:
///   UPDATE t SET ..., fence = :token WHERE id = :id AND fence <= :token
/// Thread-safe; synchronous calls may come from any thread. In a child forked after
/// create(), every call fails with errc::invalid_argument and the destructor leaves the
/// parent's connection alone (as for Client, "fork()").
class REDLOCK_EXPORT FencedStore {
 public:
  /// `url` as in Options::nodes. Throws std::invalid_argument on a malformed URL.
  static std::unique_ptr<FencedStore> create(
      const std::string& url, std::chrono::milliseconds timeout = std::chrono::milliseconds(1000),
      const TlsOptions& tls = {});
  ~FencedStore();

  /// Sets `key` to `value` iff `token` >= the highest token recorded for `resource`, and
  /// records `token`. errc::stale_token (nothing written) otherwise.
  Result<void> write(std::string_view resource, std::uint64_t token, std::string_view key,
                     std::string_view value);
  /// The stored value of `key`, if any.
  Result<std::optional<std::string>> read(std::string_view key);
  /// The highest token recorded for `resource` (0 when none).
  Result<std::uint64_t> highest_token(std::string_view resource);

 private:
  explicit FencedStore(std::unique_ptr<detail::FencedStoreImpl> impl);

  std::unique_ptr<detail::FencedStoreImpl> impl_;
};

}  // namespace redlock
