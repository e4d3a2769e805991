#include "member/key_set_parts.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>

#include "net/cluster_slot.hpp"

namespace redlock::detail {

namespace {

bool is_error(const NodeReply& reply) {
  return reply.status != NodeStatus::granted && reply.status != NodeStatus::held &&
         reply.status != NodeStatus::not_held;
}

// The first part that `matches`, or nullptr.
template <typename Predicate>
NodeReply* first(std::vector<NodeReply>& parts, Predicate matches) {
  const auto found = std::find_if(parts.begin(), parts.end(), matches);
  return found == parts.end() ? nullptr : &*found;
}

}  // namespace

std::vector<SlotGroup> slot_groups(std::span<const std::string> keys) {
  std::vector<SlotGroup> groups;
  std::vector<std::uint16_t> slots;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const std::uint16_t slot = net::key_slot(keys[i]);
    const auto index =
        static_cast<std::size_t>(std::find(slots.begin(), slots.end(), slot) - slots.begin());
    if (index == slots.size()) {
      slots.push_back(slot);
      groups.emplace_back();
    }
    groups[index].positions.push_back(i);
  }
  return groups;
}

NodeReply combine_slot_replies(KeySetCall call, std::vector<NodeReply>&& parts,
                               const std::vector<SlotGroup>& groups, std::size_t key_count) {
  const bool all_granted = std::all_of(parts.begin(), parts.end(), [](const NodeReply& part) {
    return part.status == NodeStatus::granted;
  });
  if (!all_granted) {
    const auto with = [](NodeStatus status) {
      return [status](const NodeReply& part) { return part.status == status; };
    };
    NodeReply* chosen = nullptr;
    switch (call) {
      case KeySetCall::acquire:
        chosen = first(parts, is_error);
        if (chosen == nullptr) chosen = first(parts, with(NodeStatus::held));
        break;
      case KeySetCall::extend:
      case KeySetCall::fence:
        chosen = first(parts, with(NodeStatus::not_held));
        if (chosen == nullptr) chosen = first(parts, is_error);
        break;
      case KeySetCall::release:
        chosen = first(parts, is_error);
        if (chosen == nullptr) chosen = first(parts, with(NodeStatus::not_held));
        break;
    }
    // Not all granted, so some part is one of those.
    return std::move(*chosen);
  }
  core::ReplicaAcks acks = parts.front().acks;
  // The grant counts only if every shard that gave a part of it may be counted.
  const core::MemberGuard* guard = parts.front().guard;
  bool fenced = true;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    acks.required = std::max(acks.required, parts[i].acks.required);
    acks.acked = std::min(acks.acked, parts[i].acks.acked);
    guard = core::stricter_guard(guard, parts[i].guard);
    fenced =
        fenced && !parts[i].tokens.empty() && parts[i].tokens.size() == groups[i].positions.size();
  }
  std::vector<std::uint64_t> tokens;
  if (fenced) {
    tokens.assign(key_count, 0);
    for (std::size_t i = 0; i < parts.size(); ++i) {
      for (std::size_t k = 0; k < parts[i].tokens.size(); ++k) {
        tokens[groups[i].positions[k]] = parts[i].tokens[k];
      }
    }
  }
  NodeReply combined = std::move(parts.front());
  combined.acks = acks;
  combined.guard = guard;
  // Tokens that do not add up stay as the first slot gave them: too few for the set, which
  // the caller reports (Kind::token_count_mismatch).
  if (fenced) combined.tokens = std::move(tokens);
  return combined;
}

namespace {

// A part's call, its views pointing only into its own `owned`: it is sent after
// run_key_set_by_slot has returned, when the caller's strings may be gone.
ScriptCall detached(const ScriptCall& call) {
  ScriptCall copy;
  for (const auto key : call.keys) copy.keys.push_back(copy.own(std::string(key)));
  for (const auto arg : call.args) copy.args.push_back(copy.own(std::string(arg)));
  return copy;
}

void send_part(Node& node, const scripts::Script& script, bool release, const ScriptCall& call,
               std::chrono::milliseconds timeout, ReplyReader read, NodeCallback done) {
  const Command command = call.command(script, read);
  if (release) return node.release(command, timeout, std::move(done));
  node.run(command, timeout, std::move(done));
}

// The replies of the parts sent so far; `finish` runs once the last has come. Node
// callbacks never run inside the call that sends, so the count cannot reach zero before
// every part is sent.
struct Gathering {
  std::vector<NodeReply> parts;
  std::size_t left = 0;
  core::SmallFunction<void(std::vector<NodeReply>&&), 16> finish;

  NodeCallback part(std::size_t at, const std::shared_ptr<Gathering>& self) {
    return [self, at](NodeReply&& reply) {
      self->parts[at] = std::move(reply);
      if (--self->left == 0) self->finish(std::move(self->parts));
    };
  }
};

}  // namespace

void run_key_set_by_slot(Node& node, std::span<const std::string> keys, const KeySetScript& script,
                         std::chrono::milliseconds timeout, ReplyReader read, NodeCallback done) {
  auto groups = slot_groups(keys);
  if (groups.size() == 1)
    return node.Node::run_key_set(keys, script, timeout, read, std::move(done));
  const bool release = script.call == KeySetCall::release;
  // The slot of the set's first key goes last on a release (see the header).
  if (release) std::rotate(groups.begin(), groups.begin() + 1, groups.end());
  std::vector<ScriptCall> calls(groups.size());
  for (std::size_t i = 0; i < groups.size(); ++i) script.part(groups[i].positions, calls[i]);
  // A refusal by one slot: the slots that granted release their keys at once, since the
  // member did not grant the set (errors leave them to the attempt's leftover release).
  auto undos = std::make_shared<std::vector<ScriptCall>>();
  if (script.call == KeySetCall::acquire && script.undo_script != nullptr) {
    undos->resize(groups.size());
    for (std::size_t i = 0; i < groups.size(); ++i) {
      ScriptCall undo;
      script.undo(groups[i].positions, undo);
      (*undos)[i] = detached(undo);
    }
  }
  auto ordered = std::make_shared<const std::vector<SlotGroup>>(std::move(groups));
  const std::size_t count = keys.size();
  const std::size_t sent_now = release ? ordered->size() - 1 : ordered->size();
  auto gathering = std::make_shared<Gathering>();
  gathering->parts.resize(sent_now);
  gathering->left = sent_now;
  if (!release) {
    gathering->finish = [&node, ordered, count, undos, undo_script = script.undo_script,
                         call = script.call, timeout, read,
                         done = std::move(done)](std::vector<NodeReply>&& parts) {
      std::vector<std::size_t> granted;
      for (std::size_t i = 0; i < parts.size(); ++i) {
        if (parts[i].status == NodeStatus::granted) granted.push_back(i);
      }
      auto reply = combine_slot_replies(call, std::move(parts), *ordered, count);
      if (reply.status == NodeStatus::held && !undos->empty()) {
        for (const auto i : granted) {
          send_part(node, *undo_script, /*release=*/true, (*undos)[i], timeout, read,
                    [](NodeReply&&) {});
        }
      }
      done(std::move(reply));
    };
    for (std::size_t i = 0; i < sent_now; ++i) {
      send_part(node, *script.script, false, calls[i], timeout, read,
                gathering->part(i, gathering));
    }
    return;
  }
  auto last = std::make_shared<const ScriptCall>(detached(calls.back()));
  gathering->finish = [&node, ordered, count, last, script = script.script, timeout, read,
                       done = std::move(done)](std::vector<NodeReply>&& replies) mutable {
    // A client closing answers every call cancelled: nothing more is sent.
    const auto cancelled = std::find_if(replies.begin(), replies.end(), [](const auto& part) {
      return part.status == NodeStatus::cancelled;
    });
    if (cancelled != replies.end()) return done(NodeReply(*cancelled));
    send_part(
        node, *script, /*release=*/true, *last, timeout, read,
        [ordered, last, replies = std::move(replies), count,
         done = std::move(done)](NodeReply&& first_slot) mutable {
          replies.push_back(std::move(first_slot));
          done(combine_slot_replies(KeySetCall::release, std::move(replies), *ordered, count));
        });
  };
  for (std::size_t i = 0; i < sent_now; ++i) {
    send_part(node, *script.script, true, calls[i], timeout, read, gathering->part(i, gathering));
  }
}

}  // namespace redlock::detail
