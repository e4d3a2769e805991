#pragma once
// What a command's callback receives, shared by the pipeline (net/pipeline.hpp) and the
// connection around it (net/connection.hpp).

#include <functional>
#include <string_view>
#include <system_error>

struct redisReply;

namespace redlock::net {

/// What a command's callback receives. Valid only during the callback.
///   error empty   -> `reply` is the reply (never an error reply).
///   error set     -> `detail` says why, naming the cause in words (Redis' own text for
///                    error replies, which are also passed as `reply`; otherwise null).
struct ReplyView {
  std::error_code error;
  std::string_view detail;
  const redisReply* reply = nullptr;
  /// The command was refused before any byte of it was written (not connected, queue
  /// full, no time left): the node surely did not apply it.
  bool unsent = false;
};

using ReplyCallback = std::function<void(const ReplyView&)>;

}  // namespace redlock::net
