#include "client/kinds/held.hpp"

#include <hiredis/hiredis.h>

#include <algorithm>
#include <array>
#include <functional>
#include <memory>
#include <vector>

#include "client/engine/engine.hpp"
#include "client/kinds/key_set_slots.hpp"
#include "client/kinds/lock_state.hpp"
#include "client/rounds/round.hpp"
#include "client/util/messages.hpp"
#include "scripts/family_scripts.hpp"
#include "scripts/lock_scripts.hpp"

namespace redlock::detail {

using core::Clock;
using std::chrono::milliseconds;

namespace {

// The family scripts' announce argument: a cluster member announces on the key's shard
// alone (SPUBLISH, family_scripts.hpp), every other member to all its subscribers.
std::string_view announce_flag(const Node& node, Announce announce) {
  if (announce == Announce::no) return "0";
  return node.routes_by_slot() ? "s" : "1";
}

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

// Every path returns `result`, so that it is built in the caller's slot (NRVO) instead of
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

// A key set's KEYS: its locks, then (with fencing) their fence counters in the same order.
// The views point into `held`; the counters' names are kept alongside.
struct KeySetKeys {
  std::vector<std::string> fence_keys;
  std::vector<std::string_view> keys;
};

KeySetKeys key_set_keys(const Node& node, const std::vector<std::string>& keys, bool fencing) {
  KeySetKeys out;
  out.keys.assign(keys.begin(), keys.end());
  if (!fencing) return out;
  out.fence_keys.reserve(keys.size());
  for (const auto& key : keys) out.fence_keys.push_back(node.fence_key(key));
  out.keys.insert(out.keys.end(), out.fence_keys.begin(), out.fence_keys.end());
  return out;
}

// Sends one script per slot group (`send(group, its callback)`), in parallel, and hands
// every group's reply to `all_done` once the last has come. Node callbacks never run
// inside the call that sends, so the count cannot reach zero before every group is sent.
void per_slot(const std::vector<SlotGroup>& groups,
              const std::function<void(std::size_t, NodeCallback)>& send,
              std::function<void(std::vector<NodeReply>&&)> all_done) {
  struct Replies {
    std::vector<NodeReply> parts;
    std::size_t left = 0;
    std::function<void(std::vector<NodeReply>&&)> all_done;
  };
  auto replies = std::make_shared<Replies>();
  replies->parts.resize(groups.size());
  replies->left = groups.size();
  replies->all_done = std::move(all_done);
  for (std::size_t i = 0; i < groups.size(); ++i) {
    send(i, [replies, i](NodeReply&& reply) {
      replies->parts[i] = std::move(reply);
      if (--replies->left == 0) replies->all_done(std::move(replies->parts));
    });
  }
}

void key_set_acquire(Node& node, const std::vector<std::string>& keys, std::string_view value,
                     const std::string& ttl_ms, bool fencing, milliseconds timeout,
                     NodeCallback done) {
  const auto set = key_set_keys(node, keys, fencing);
  const std::array<std::string_view, 3> args{value, ttl_ms, fencing ? "1" : "0"};
  node.run_family_script(scripts::multi_acquire(), set.keys, args, timeout, interpret_family_reply,
                         std::move(done));
}

void key_set_release(Node& node, const std::vector<std::string>& keys, std::string_view value,
                     Announce announce, milliseconds timeout, NodeCallback done) {
  const std::vector<std::string_view> names(keys.begin(), keys.end());
  const std::array<std::string_view, 2> args{value, announce_flag(node, announce)};
  node.release_by_script(scripts::multi_release(), names, args, timeout, interpret_family_reply,
                         std::move(done));
}

void key_set_extend(Node& node, const std::vector<std::string>& keys, std::string_view value,
                    const std::string& ttl_ms, milliseconds timeout, NodeCallback done) {
  const std::vector<std::string_view> names(keys.begin(), keys.end());
  const std::array<std::string_view, 2> args{value, ttl_ms};
  node.run_family_script(scripts::multi_extend(), names, args, timeout, interpret_family_reply,
                         std::move(done));
}

// `token_at(n)`: the token of the n-th of `keys`.
template <typename TokenAt>
void key_set_fence(Node& node, const std::vector<std::string>& keys, std::string_view value,
                   TokenAt token_at, milliseconds timeout, NodeCallback done) {
  std::vector<std::string> token_texts;
  token_texts.reserve(keys.size());
  for (std::size_t n = 0; n < keys.size(); ++n) token_texts.push_back(std::to_string(token_at(n)));
  std::vector<std::string_view> args{value};
  args.insert(args.end(), token_texts.begin(), token_texts.end());
  const auto set = key_set_keys(node, keys, /*fencing=*/true);
  node.run_family_script(scripts::multi_fence(), set.keys, args, timeout, interpret_family_reply,
                         std::move(done));
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
    // A member that is one server takes the set in one script: no grouping to pay for.
    if (!node.routes_by_slot()) {
      return key_set_acquire(node, held.keys, value, ttl_ms, fencing, timeout, std::move(done));
    }
    auto groups = slot_groups(held.keys, /*by_slot=*/true);
    if (groups.size() == 1) {
      return key_set_acquire(node, held.keys, value, ttl_ms, fencing, timeout, std::move(done));
    }
    const auto send = [&](std::size_t i, NodeCallback part) {
      key_set_acquire(node, groups[i].keys, value, ttl_ms, fencing, timeout, std::move(part));
    };
    const std::size_t count = held.keys.size();
    // A refusal by one slot: the slots that granted release their keys at once, since the
    // member did not grant the set (errors leave them to the attempt's leftover release).
    return per_slot(groups, send,
                    [&node, groups, count, value = std::string(value), timeout,
                     done = std::move(done)](std::vector<NodeReply>&& parts) {
                      std::vector<std::size_t> granted;
                      for (std::size_t i = 0; i < parts.size(); ++i) {
                        if (parts[i].status == NodeStatus::granted) granted.push_back(i);
                      }
                      auto reply =
                          combine_slot_replies(SlotCall::acquire, std::move(parts), groups, count);
                      if (reply.status == NodeStatus::held) {
                        for (const auto i : granted) {
                          key_set_release(node, groups[i].keys, value, Announce::no, timeout,
                                          [](NodeReply&&) {});
                        }
                      }
                      done(std::move(reply));
                    });
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
    if (!node.routes_by_slot()) {
      return key_set_extend(node, held.keys, value, ttl_ms, timeout, std::move(done));
    }
    const auto groups = slot_groups(held.keys, /*by_slot=*/true);
    const auto send = [&](std::size_t i, NodeCallback part) {
      key_set_extend(node, groups[i].keys, value, ttl_ms, timeout, std::move(part));
    };
    if (groups.size() == 1) return send(0, std::move(done));
    return per_slot(
        groups, send,
        [groups, count = held.keys.size(), done = std::move(done)](std::vector<NodeReply>&& parts) {
          done(combine_slot_replies(SlotCall::extend, std::move(parts), groups, count));
        });
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
    if (!node.routes_by_slot()) {
      return key_set_release(node, held.keys, value, announce, timeout, std::move(done));
    }
    auto groups = slot_groups(held.keys, /*by_slot=*/true);
    if (groups.size() == 1) {
      return key_set_release(node, held.keys, value, announce, timeout, std::move(done));
    }
    // The slot of the set's first key, whose channel waiters listen on, is released last,
    // once the others answered: a waiter woken by its announcement finds the set free.
    std::rotate(groups.begin(), groups.begin() + 1, groups.end());
    auto ordered = std::make_shared<const std::vector<SlotGroup>>(std::move(groups));
    const std::vector<SlotGroup> others(ordered->begin(), ordered->end() - 1);
    const auto send = [&](std::size_t i, NodeCallback part) {
      key_set_release(node, others[i].keys, value, Announce::no, timeout, std::move(part));
    };
    return per_slot(
        others, send,
        [&node, ordered, count = held.keys.size(), value = std::string(value), announce, timeout,
         done = std::move(done)](std::vector<NodeReply>&& replies) mutable {
          // A client closing answers every call cancelled: nothing more is sent.
          const auto cancelled = std::find_if(replies.begin(), replies.end(), [](const auto& part) {
            return part.status == NodeStatus::cancelled;
          });
          if (cancelled != replies.end()) return done(NodeReply(*cancelled));
          key_set_release(
              node, ordered->back().keys, value, announce, timeout,
              [ordered, replies = std::move(replies), count,
               done = std::move(done)](NodeReply&& first_slot) mutable {
                replies.push_back(std::move(first_slot));
                done(combine_slot_replies(SlotCall::release, std::move(replies), *ordered, count));
              });
        });
  }
  const std::array<std::string_view, 1> keys{held.key};
  const std::array<std::string_view, 4> args{value, announce_flag(node, announce), mode_of(held),
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
  const auto token_of = [&tokens](std::size_t at) -> std::uint64_t {
    return at < tokens.size() ? tokens[at] : 0;
  };
  if (!node.routes_by_slot()) {
    return key_set_fence(node, held.keys, value, token_of, timeout, std::move(done));
  }
  const auto groups = slot_groups(held.keys, /*by_slot=*/true);
  const auto send = [&](std::size_t i, NodeCallback part) {
    const auto& positions = groups[i].positions;
    key_set_fence(
        node, groups[i].keys, value, [&](std::size_t n) { return token_of(positions[n]); }, timeout,
        std::move(part));
  };
  if (groups.size() == 1) return send(0, std::move(done));
  per_slot(
      groups, send,
      [groups, count = held.keys.size(), done = std::move(done)](std::vector<NodeReply>&& parts) {
        done(combine_slot_replies(SlotCall::fence, std::move(parts), groups, count));
      });
}

}  // namespace redlock::detail
