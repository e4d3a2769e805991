#include "client/kinds/held.hpp"

#include <hiredis/hiredis.h>

#include <algorithm>
#include <array>
#include <functional>
#include <memory>
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

// Every path returns `result`, so that it is built in the caller's storage (NRVO) instead of
// moved there: a reply is read for each node twice a cycle.
NodeReply interpret_family_reply(const redisReply* reply, std::string_view where) {
  NodeReply result;
  if (reply->type != REDIS_REPLY_ARRAY || reply->elements == 0 || !is_integer(reply->element[0])) {
    result = unexpected_reply(reply, where);
    return result;
  }
  const auto code = reply->element[0]->integer;
  if (code == 1) {
    result.status = NodeStatus::granted;
    if (reply->elements == 2 && is_integer(reply->element[1]) && reply->element[1]->integer > 0) {
      result.token = static_cast<std::uint64_t>(reply->element[1]->integer);
    }
    // A key set with fencing: {1, 0, one token per key}.
    for (std::size_t i = 2; i < reply->elements; ++i) {
      if (!is_integer(reply->element[i]) || reply->element[i]->integer <= 0) {
        result = unexpected_reply(reply, where);
        return result;
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
    result = wrong_kind_reply(text_of(reply->element[1]));
    if (reply->elements == 3 && reply->element[2]->type == REDIS_REPLY_STRING) {
      result.detail = "key " + quote_key(text_of(reply->element[2])) + ": " + result.detail;
    }
    return result;
  }
  result = unexpected_reply(reply, where);
  return result;
}

namespace {

const char* mode_of(const Held& held) {
  return held.primitive == Primitive::writer ? "w" : "r";
}

// The set's keys at `positions`, in that order.
void add_keys(std::span<const std::string> keys, std::span<const std::size_t> positions,
              ScriptCall& out) {
  for (const auto at : positions) out.keys.emplace_back(keys[at]);
}

// With fencing, the keys' fence counters follow them in the same order.
void add_fence_keys(const Node& node, std::span<const std::string> keys,
                    std::span<const std::size_t> positions, ScriptCall& out) {
  for (const auto at : positions) out.keys.push_back(out.own(node.fence_key(keys[at])));
}

void key_set_acquire(Node& node, const std::vector<std::string>& keys, std::string_view value,
                     std::string_view ttl_ms, bool fencing, milliseconds timeout,
                     NodeCallback done) {
  const auto part = [&](std::span<const std::size_t> positions, ScriptCall& out) {
    add_keys(keys, positions, out);
    if (fencing) add_fence_keys(node, keys, positions, out);
    out.args = {value, ttl_ms, fencing ? "1" : "0"};
  };
  const auto undo = [&](std::span<const std::size_t> positions, ScriptCall& out) {
    add_keys(keys, positions, out);
    out.args = {value, node.announce_argument(Announce::no)};
  };
  node.run_key_set(
      keys, {KeySetCall::acquire, &scripts::multi_acquire(), part, &scripts::multi_release(), undo},
      timeout, interpret_family_reply, std::move(done));
}

void key_set_release(Node& node, const std::vector<std::string>& keys, std::string_view value,
                     Announce announce, milliseconds timeout, NodeCallback done) {
  const auto part = [&](std::span<const std::size_t> positions, ScriptCall& out) {
    add_keys(keys, positions, out);
    // Only the part with the set's first key announces: waiters listen on its channel.
    const bool first = !positions.empty() && positions.front() == 0;
    out.args = {value, node.announce_argument(first ? announce : Announce::no)};
  };
  node.run_key_set(keys, {KeySetCall::release, &scripts::multi_release(), part}, timeout,
                   interpret_family_reply, std::move(done));
}

void key_set_extend(Node& node, const std::vector<std::string>& keys, std::string_view value,
                    std::string_view ttl_ms, milliseconds timeout, NodeCallback done) {
  const auto part = [&](std::span<const std::size_t> positions, ScriptCall& out) {
    add_keys(keys, positions, out);
    out.args = {value, ttl_ms};
  };
  node.run_key_set(keys, {KeySetCall::extend, &scripts::multi_extend(), part}, timeout,
                   interpret_family_reply, std::move(done));
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
    return key_set_acquire(node, held.keys, value, ttl_ms, fencing, timeout, std::move(done));
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
    return key_set_extend(node, held.keys, value, ttl_ms, timeout, std::move(done));
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
    return key_set_release(node, held.keys, value, announce, timeout, std::move(done));
  }
  const std::array<std::string_view, 1> keys{held.key};
  const std::array<std::string_view, 4> args{value, node.announce_argument(announce), mode_of(held),
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
  token_texts.reserve(held.keys.size());
  for (std::size_t at = 0; at < held.keys.size(); ++at) {
    token_texts.push_back(std::to_string(at < tokens.size() ? tokens[at] : 0));
  }
  const auto part = [&](std::span<const std::size_t> positions, ScriptCall& out) {
    add_keys(held.keys, positions, out);
    add_fence_keys(node, held.keys, positions, out);
    out.args = {value};
    for (const auto at : positions) out.args.emplace_back(token_texts[at]);
  };
  node.run_key_set(held.keys, {KeySetCall::fence, &scripts::multi_fence(), part}, timeout,
                   interpret_family_reply, std::move(done));
}

}  // namespace redlock::detail
