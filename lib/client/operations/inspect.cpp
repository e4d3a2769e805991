#include "client/operations/inspect.hpp"

#include <hiredis/hiredis.h>

#include <algorithm>
#include <array>
#include <optional>
#include <utility>

#include "client/engine/engine.hpp"
#include "client/operations/operations.hpp"
#include "client/rounds/round.hpp"
#include "core/member_guard.hpp"
#include "scripts/kind_scripts.hpp"

namespace redlock {

const char* to_string(LockKind kind) noexcept {
  switch (kind) {
    case LockKind::unknown:
      return "unknown";
    case LockKind::none:
      return "none";
    case LockKind::exclusive:
      return "exclusive";
    case LockKind::semaphore:
      return "semaphore";
    case LockKind::read_write:
      return "read_write";
    case LockKind::other:
      return "other";
  }
  return "unknown";
}

const char* to_string(HolderRole role) noexcept {
  switch (role) {
    case HolderRole::owner:
      return "owner";
    case HolderRole::permit:
      return "permit";
    case HolderRole::reader:
      return "reader";
    case HolderRole::writer:
      return "writer";
    case HolderRole::intent:
      return "intent";
  }
  return "unknown";
}

}  // namespace redlock

namespace redlock::detail {

using std::chrono::milliseconds;

namespace {

std::string_view text_of(const redisReply* reply) {
  return {reply->str, reply->len};
}

// The layouts of kind_scripts.hpp: one Redis type per kind of lock.
LockKind kind_of(std::string_view redis_type) {
  if (redis_type == "none") return LockKind::none;
  if (redis_type == "string") return LockKind::exclusive;
  if (redis_type == "zset") return LockKind::semaphore;
  if (redis_type == "hash") return LockKind::read_write;
  return LockKind::other;
}

std::optional<HolderRole> role_of(std::string_view code) {
  if (code == "o") return HolderRole::owner;
  if (code == "p") return HolderRole::permit;
  if (code == "w") return HolderRole::writer;
  if (code == "r") return HolderRole::reader;
  if (code == "i") return HolderRole::intent;
  return std::nullopt;
}

NodeReply unexpected_reply(const redisReply* reply, std::string_view where) {
  NodeReply result;
  result.status = NodeStatus::redis_error;
  result.error = make_error_code(errc::protocol_error);
  result.detail =
      std::string(where) + ": unexpected reply to the key_inspect script: " + describe_reply(reply);
  return result;
}

}  // namespace

NodeReply interpret_inspect_reply(const redisReply* reply, std::string_view where) {
  if (reply->type != REDIS_REPLY_ARRAY || reply->elements == 0 ||
      reply->element[0]->type != REDIS_REPLY_STRING || (reply->elements - 1) % 3 != 0) {
    return unexpected_reply(reply, where);
  }
  const auto redis_type = text_of(reply->element[0]);
  const auto kind = kind_of(redis_type);
  if (kind == LockKind::other) {
    auto foreign = wrong_kind_reply(redis_type);
    foreign.kind = kind;
    return foreign;
  }
  NodeReply result;
  result.kind = kind;
  for (std::size_t i = 1; i < reply->elements; i += 3) {
    const redisReply* code = reply->element[i];
    const redisReply* value = reply->element[i + 1];
    const redisReply* left = reply->element[i + 2];
    if (code->type != REDIS_REPLY_STRING || value->type != REDIS_REPLY_STRING ||
        left->type != REDIS_REPLY_INTEGER) {
      return unexpected_reply(reply, where);
    }
    const auto role = role_of(text_of(code));
    if (!role) return unexpected_reply(reply, where);
    result.holders.push_back({*role, std::string(text_of(value)), milliseconds(left->integer)});
  }
  const bool holds = std::any_of(result.holders.begin(), result.holders.end(),
                                 [](const KeyHolder& h) { return h.role != HolderRole::intent; });
  result.status = holds ? NodeStatus::held : NodeStatus::not_held;
  // Filled as the exclusive status() fills them, so an exclusive key reads the same both ways.
  if (kind == LockKind::exclusive && holds) {
    result.holder = result.holders.front().value;
    result.remaining_ttl = result.holders.front().remaining_ttl;
  }
  return result;
}

void start_inspect(const std::shared_ptr<Engine>& engine, std::string key,
                   milliseconds node_timeout, InspectDone done) {
  auto& nodes = engine->nodes();
  // A round keeps only each node's outcome; the kind and holders are kept here, by node.
  auto views = std::make_shared<std::vector<NodeView>>(nodes.size());
  run_round(
      *engine,
      [&](Node& node, NodeCallback reply) {
        const auto index = static_cast<std::size_t>(
            std::find_if(nodes.begin(), nodes.end(),
                         [&](const std::unique_ptr<Node>& each) { return each.get() == &node; }) -
            nodes.begin());
        const std::array<std::string_view, 1> keys{key};
        node.run({.script = &scripts::key_inspect(), .keys = keys, .read = interpret_inspect_reply},
                 node_timeout, [views, index, &node, reply = std::move(reply)](NodeReply answer) {
                   auto& view = (*views)[index];
                   view.served_by = node.serving();
                   const auto now = core::Clock::now();
                   // The key's server's, where the member has several.
                   const auto& guard = answer.guard != nullptr ? *answer.guard : node.guard();
                   if (core::guarded(guard, now)) {
                     view.guard = core::guarded_detail(guard, now);
                   }
                   view.kind = answer.kind;
                   view.holders = std::move(answer.holders);
                   reply(std::move(answer));
                 });
      },
      vote_owner_action,
      [engine, views, key, done = std::move(done)](RoundResult& round) {
        if (round.cancelled && !engine->open())
          return done(cancelled_error("inspect " + quote_key(key)));
        for (std::size_t i = 0; i < views->size(); ++i) {
          (*views)[i].outcome = std::move(round.outcomes[i]);
        }
        done(std::move(*views));
      },
      {.wait_for_all = true});
}

}  // namespace redlock::detail
