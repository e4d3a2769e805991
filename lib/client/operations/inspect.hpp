#pragma once
// Client::inspect: every node's view of a key, whatever kind of lock uses it, read by one
// script (scripts::key_inspect) that looks at the key's Redis type first, so a key of
// any kind answers with its holders and never with a type error.

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <redlock/inspection.hpp>
#include <redlock/result.hpp>

#include "member/node.hpp"

namespace redlock::detail {

class Engine;

using InspectDone = std::function<void(Result<std::vector<NodeView>>)>;

/// Reads the reply of scripts::key_inspect; `where` names the node in error details.
NodeReply interpret_inspect_reply(const redisReply* reply, std::string_view where);

/// Every node's view of `key`, in the order of Options::nodes (waits for all, each up to
/// `node_timeout`). `done` runs exactly once, on the loop thread.
void start_inspect(const std::shared_ptr<Engine>& engine, std::string key,
                   std::chrono::milliseconds node_timeout, InspectDone done);

}  // namespace redlock::detail
