#include "client/kinds/held.hpp"

#include <hiredis/hiredis.h>

#include <array>
#include <vector>

#include "client/engine/engine.hpp"
#include "client/kinds/lock_state.hpp"
#include "client/rounds/round.hpp"
#include "client/util/messages.hpp"
#include "scripts/family_scripts.hpp"
#include "scripts/lock_scripts.hpp"

namespace redlock::detail {

using core::Clock;
using std::chrono::milliseconds;

namespace {

bool is_integer(const redisReply* reply) {
  return reply->type == REDIS_REPLY_INTEGER;
}

std::string_view text_of(const redisReply* reply) {
  return {reply->str, reply->len};
}

NodeReply unexpected_reply(const redisReply* reply, std::string_view where) {
  NodeReply result;
  result.status = NodeStatus::redis_error;
  result.error = make_error_code(errc::protocol_error);
  result.detail =
      std::string(where) + ": unexpected reply to a lock-family script: " + describe_reply(reply);
  return result;
}

}  // namespace

std::string Held::describe() const {
  switch (primitive) {
    case Primitive::permit:
      return "semaphore " + quote_key(key) + " (" + std::to_string(permits) + " permits)";
    case Primitive::reader:
      return "read lock " + quote_key(key);
    case Primitive::writer:
      return "write lock " + quote_key(key);
    case Primitive::keys: {
      std::string text = "lock of keys {";
      for (std::size_t i = 0; i < keys.size() && i < 8; ++i) {
        text += (i > 0 ? ", " : "") + quote_key(keys[i]);
      }
      return text + (keys.size() > 8 ? ", ...}" : "}");
    }
  }
  return quote_key(key);
}

NodeReply interpret_family_reply(const redisReply* reply, std::string_view where) {
  if (reply->type != REDIS_REPLY_ARRAY || reply->elements == 0 || !is_integer(reply->element[0])) {
    return unexpected_reply(reply, where);
  }
  const auto code = reply->element[0]->integer;
  NodeReply result;
  if (code == 1) {
    result.status = NodeStatus::granted;
    if (reply->elements == 2 && is_integer(reply->element[1]) && reply->element[1]->integer > 0) {
      result.token = static_cast<std::uint64_t>(reply->element[1]->integer);
    }
    // A key set with fencing: {1, 0, one token per key}.
    for (std::size_t i = 2; i < reply->elements; ++i) {
      if (!is_integer(reply->element[i]) || reply->element[i]->integer <= 0) {
        return unexpected_reply(reply, where);
      }
      result.tokens.push_back(static_cast<std::uint64_t>(reply->element[i]->integer));
    }
    return result;
  }
  if (code == 0 && reply->elements == 1) {
    result.status = NodeStatus::not_held;
    return result;
  }
  if (code == 0 && reply->elements == 4 && is_integer(reply->element[1]) &&
      reply->element[2]->type == REDIS_REPLY_STRING &&
      reply->element[3]->type == REDIS_REPLY_STRING) {
    result.status = NodeStatus::held;
    result.remaining_ttl = milliseconds(reply->element[1]->integer);
    result.holder = std::string(text_of(reply->element[2]));
    result.detail = std::string(text_of(reply->element[3]));
    return result;
  }
  if (code == 0 && reply->elements == 5 && is_integer(reply->element[1]) &&
      reply->element[2]->type == REDIS_REPLY_STRING &&
      reply->element[4]->type == REDIS_REPLY_STRING) {
    result.status = NodeStatus::held;
    result.remaining_ttl = milliseconds(reply->element[1]->integer);
    result.holder = std::string(text_of(reply->element[2]));
    result.detail = "key " + quote_key(text_of(reply->element[4])) + " held by " + result.holder;
    return result;
  }
  if (code == -1 && reply->elements >= 2 && reply->element[1]->type == REDIS_REPLY_STRING) {
    auto wrong = wrong_kind_reply(text_of(reply->element[1]));
    if (reply->elements == 3 && reply->element[2]->type == REDIS_REPLY_STRING) {
      wrong.detail = "key " + quote_key(text_of(reply->element[2])) + ": " + wrong.detail;
    }
    return wrong;
  }
  return unexpected_reply(reply, where);
}

namespace {

const char* mode_of(const Held& held) {
  return held.primitive == Primitive::writer ? "w" : "r";
}

// A key set's KEYS: its locks, then (with fencing) their fence counters in the same order.
// The views point into `held`; the counters' names are kept alongside.
struct KeySetKeys {
  std::vector<std::string> fence_keys;
  std::vector<std::string_view> keys;
};

KeySetKeys key_set_keys(const Node& node, const Held& held, bool fencing) {
  KeySetKeys out;
  out.keys.assign(held.keys.begin(), held.keys.end());
  if (!fencing) return out;
  out.fence_keys.reserve(held.keys.size());
  for (const auto& key : held.keys) out.fence_keys.push_back(node.fence_key(key));
  out.keys.insert(out.keys.end(), out.fence_keys.begin(), out.fence_keys.end());
  return out;
}

}  // namespace

void send_family_acquire(Node& node, const Held& held, std::string_view value, milliseconds ttl,
                         bool fencing, milliseconds timeout, NodeCallback done) {
  const std::string ttl_ms = std::to_string(ttl.count());
  if (held.primitive == Primitive::permit) {
    const std::string permits = std::to_string(held.permits);
    const std::array<std::string_view, 1> keys{held.key};
    const std::array<std::string_view, 3> args{value, ttl_ms, permits};
    return node.run_family_script(scripts::semaphore_acquire(), keys, args, timeout,
                                  interpret_family_reply, std::move(done));
  }
  if (held.primitive == Primitive::keys) {
    const auto set = key_set_keys(node, held, fencing);
    const std::array<std::string_view, 3> args{value, ttl_ms, fencing ? "1" : "0"};
    return node.run_family_script(scripts::multi_acquire(), set.keys, args, timeout,
                                  interpret_family_reply, std::move(done));
  }
  const std::string fence_key = node.fence_key(held.key);
  const std::string intent_ms = std::to_string(held.intent_ttl.count());
  const std::array<std::string_view, 2> keys{held.key, fence_key};
  const std::array<std::string_view, 6> args{value,       ttl_ms,    mode_of(held),
                                             held.intent, intent_ms, fencing ? "1" : "0"};
  node.run_family_script(scripts::rw_acquire(), keys, args, timeout, interpret_family_reply,
                         std::move(done));
}

void send_family_extend(Node& node, const Held& held, std::string_view value, milliseconds ttl,
                        milliseconds timeout, NodeCallback done) {
  const std::string ttl_ms = std::to_string(ttl.count());
  if (held.primitive == Primitive::keys) {
    const std::vector<std::string_view> keys(held.keys.begin(), held.keys.end());
    const std::array<std::string_view, 2> args{value, ttl_ms};
    return node.run_family_script(scripts::multi_extend(), keys, args, timeout,
                                  interpret_family_reply, std::move(done));
  }
  const std::array<std::string_view, 1> keys{held.key};
  const std::array<std::string_view, 3> args{value, ttl_ms, mode_of(held)};
  const bool permit = held.primitive == Primitive::permit;
  node.run_family_script(permit ? scripts::semaphore_extend() : scripts::rw_extend(), keys,
                         std::span(args).first(permit ? 2 : 3), timeout, interpret_family_reply,
                         std::move(done));
}

void send_family_release(Node& node, const Held& held, std::string_view value, Announce announce,
                         milliseconds timeout, NodeCallback done, bool keep_intent) {
  if (held.primitive == Primitive::keys) {
    const std::vector<std::string_view> keys(held.keys.begin(), held.keys.end());
    const std::array<std::string_view, 2> args{value, announce == Announce::yes ? "1" : "0"};
    return node.release_by_script(scripts::multi_release(), keys, args, timeout,
                                  interpret_family_reply, std::move(done));
  }
  const std::array<std::string_view, 1> keys{held.key};
  const std::array<std::string_view, 4> args{value, announce == Announce::yes ? "1" : "0",
                                             mode_of(held),
                                             keep_intent ? std::string_view() : held.intent};
  const bool permit = held.primitive == Primitive::permit;
  node.release_by_script(permit ? scripts::semaphore_release() : scripts::rw_release(), keys,
                         std::span(args).first(permit ? 2 : 4), timeout, interpret_family_reply,
                         std::move(done));
}

void send_family_fence(Node& node, const Held& held, std::string_view value, std::uint64_t token,
                       milliseconds timeout, NodeCallback done) {
  const std::string fence_key = node.fence_key(held.key);
  const std::string token_text = std::to_string(token);
  const std::array<std::string_view, 2> keys{held.key, fence_key};
  const std::array<std::string_view, 2> args{value, token_text};
  node.run_family_script(scripts::rw_fence(), keys, args, timeout, interpret_family_reply,
                         std::move(done));
}

void send_key_set_fence(Node& node, const Held& held, std::string_view value,
                        const std::vector<std::uint64_t>& tokens, milliseconds timeout,
                        NodeCallback done) {
  std::vector<std::string> token_texts;
  token_texts.reserve(tokens.size());
  for (const auto token : tokens) token_texts.push_back(std::to_string(token));
  std::vector<std::string_view> args{value};
  args.insert(args.end(), token_texts.begin(), token_texts.end());
  const auto set = key_set_keys(node, held, /*fencing=*/true);
  node.run_family_script(scripts::multi_fence(), set.keys, args, timeout, interpret_family_reply,
                         std::move(done));
}

}  // namespace redlock::detail
