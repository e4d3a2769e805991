#pragma once
// A member's connection events (connected, down, back up, a script reloaded, overloaded,
// a master changed, a redirection) reported to the client's observer and log sink. Set on
// each connection when the engine makes its nodes, below every operation: these events
// belong to the member, not to a lock.

#include <chrono>
#include <functional>
#include <string>
#include <string_view>

#include <redlock/options.hpp>

#include "net/connection.hpp"

namespace redlock::detail {

/// Whether the client reports anything: an unobserved client pays one branch per event.
inline bool observed(const Options& options) noexcept {
  return options.observer != nullptr || options.log != nullptr;
}

/// `connection` with the node callbacks that report to `options`' observer and log sink
/// (unchanged when neither is set).
net::ConnectionOptions observe_connection(net::ConnectionOptions connection,
                                          const Options& options);

/// What reports a guard of member `node` (core::MemberLife::Rules::on_guarded) to `options`'
/// observer and log sink; empty when neither is set.
std::function<void(std::chrono::milliseconds, std::string_view)> observe_guard(
    std::string node, const Options& options);

/// What reports a problem of member `node`'s setup (core::MemberLife::Rules::on_misconfigured)
/// to `options`' observer (NodeEventKind::misconfigured) and log sink (a warning); empty
/// when neither is set.
std::function<void(std::string_view)> observe_misconfiguration(std::string node,
                                                               const Options& options);

}  // namespace redlock::detail
