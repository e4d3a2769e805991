#pragma once
// The pieces every error message and log line of lib/client is made of, so that a key,
// a closed client and a duration read the same wherever they are reported.

#include <chrono>
#include <string>
#include <string_view>

#include <redlock/error.hpp>

#include "core/validity.hpp"

namespace redlock::detail {

/// A key as it appears in messages: quoted, control bytes and quotes as \xNN, cut after
/// 64 bytes.
std::string quote_key(std::string_view key);

/// errc::cancelled, "<what>: the client closed".
Error cancelled_error(std::string_view what);

/// "12 ms": the whole milliseconds from `since` to `now`.
std::string elapsed_ms(core::Clock::time_point since, core::Clock::time_point now);

}  // namespace redlock::detail
