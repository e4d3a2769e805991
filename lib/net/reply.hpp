#pragma once
// What a command's callback receives, shared by the pipeline (net/pipeline.hpp) and the
// connection around it (net/connection.hpp).

#include <string_view>
#include <system_error>

#include "core/small_function.hpp"

struct redisReply;

namespace redlock::net {

class Connection;

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
  /// Which of a member's servers answered, where it has several (a Redis Cluster's shard
  /// masters: the shard's connection); null for a connection that is one server.
  const Connection* server = nullptr;
};

/// A command's callback. Those of lock commands capture a node and a call's slot, which
/// move as bytes (core/small_function.hpp); larger closures go on the heap.
using ReplyCallback = core::SmallFunction<void(const ReplyView&), 16>;

}  // namespace redlock::net
