#include "client/kinds/kind.hpp"

#include "client/engine/engine.hpp"
#include "client/kinds/held.hpp"
#include "client/rounds/round.hpp"
#include "client/util/messages.hpp"

namespace redlock::detail {

using std::chrono::milliseconds;

std::string describe_lock(const Held* held, std::string_view key) {
  return held != nullptr ? held->describe() : "lock " + quote_key(key);
}

int quorum_of(const Held* held) noexcept {
  return held != nullptr ? held->quorum : 0;
}

void for_each_key(const Held* held, const std::string& key,
                  FunctionRef<void(const std::string&)> each) {
  if (held != nullptr && held->primitive == Primitive::keys) {
    for (const auto& one : held->keys) each(one);
    return;
  }
  each(key);
}

void send_extend(Node& node, const Held* held, std::string_view key, std::string_view value,
                 milliseconds ttl, milliseconds timeout, NodeCallback done) {
  if (held == nullptr) return node.extend(key, value, ttl, timeout, std::move(done));
  send_family_extend(node, *held, value, ttl, timeout, std::move(done));
}

void send_release(Node& node, const Held* held, std::string_view key, std::string_view value,
                  Announce announce, milliseconds timeout, NodeCallback done, bool keep_intent) {
  if (held == nullptr) return node.release(key, value, announce, timeout, std::move(done));
  send_family_release(node, *held, value, announce, timeout, std::move(done), keep_intent);
}

Kind Kind::exclusive(std::string key) {
  Kind kind;
  kind.key_ = std::move(key);
  return kind;
}

Kind Kind::of(std::shared_ptr<const Held> held) {
  Kind kind;
  kind.held_ = std::move(held);
  return kind;
}

const std::string& Kind::key() const noexcept {
  return held_ ? held_->key : key_;
}

std::string Kind::take_key() {
  return held_ ? held_->key : std::move(key_);
}

std::string Kind::describe() const {
  return describe_lock(held_.get(), key_);
}

int Kind::quorum() const noexcept {
  return quorum_of(held_.get());
}

bool Kind::fences() const noexcept {
  return !held_ || held_->primitive == Primitive::writer || held_->primitive == Primitive::keys;
}

bool Kind::sleeps_on_holder() const noexcept {
  return !held_ || held_->primitive != Primitive::keys;
}

std::optional<milliseconds> Kind::refresh_within() const noexcept {
  if (!held_ || held_->primitive != Primitive::writer) return std::nullopt;
  return std::max(held_->intent_ttl / 2, milliseconds(1));
}

bool Kind::keeps_wake() const noexcept {
  return !held_ || held_->primitive != Primitive::reader;
}

bool Kind::queues_behind_waiters() const noexcept {
  return !held_ || held_->primitive != Primitive::permit;
}

std::size_t Kind::key_count() const noexcept {
  return held_ && held_->primitive == Primitive::keys ? held_->keys.size() : 1;
}

void Kind::send_acquire(Node& node, std::string_view value, milliseconds ttl, bool fencing,
                        HolderTtl holder_ttl, milliseconds timeout, NodeCallback done) const {
  if (!held_) return node.acquire(key_, value, ttl, fencing, holder_ttl, timeout, std::move(done));
  send_family_acquire(node, *held_, value, ttl, fencing, timeout, std::move(done));
}

void Kind::send_write_back(Node& node, std::string_view value, const RoundResult& acquired,
                           milliseconds timeout, NodeCallback done) const {
  if (!held_) return node.fence(key_, value, acquired.max_token, timeout, std::move(done));
  if (held_->primitive == Primitive::keys) {
    return send_key_set_fence(node, *held_, value, acquired.max_tokens, timeout, std::move(done));
  }
  send_family_fence(node, *held_, value, acquired.max_token, timeout, std::move(done));
}

void Kind::send_release(Node& node, std::string_view value, Announce announce, milliseconds timeout,
                        NodeCallback done, bool keep_intent) const {
  if (!held_) return node.release(key_, value, announce, timeout, std::move(done));
  send_family_release(node, *held_, value, announce, timeout, std::move(done), keep_intent);
}

void Kind::withdraw_intent(Engine& engine, milliseconds timeout) const {
  if (!held_ || held_->primitive != Primitive::writer || !engine.open()) return;
  for (auto& node : engine.nodes()) {
    // The value is the intent's own id: no lock entry has it, so only the intent goes.
    send_family_release(*node, *held_, held_->intent, Announce::no, timeout,
                        engine.count_release([](NodeReply) {}));
  }
}

bool Kind::token_count_mismatch(const RoundResult& acquired) const {
  return held_ && held_->primitive == Primitive::keys &&
         acquired.max_tokens.size() != held_->keys.size();
}

void Kind::tokens_of(const RoundResult& acquired, std::optional<std::uint64_t>& token,
                     std::vector<std::uint64_t>& tokens) const {
  if (held_ && held_->primitive == Primitive::keys) {
    tokens = acquired.max_tokens;
  } else if (fences()) {
    token = acquired.max_token;
  }
}

Kind::Holder Kind::holder_on_quorum(const RoundResult& refused) const {
  const auto& outcomes = refused.outcomes;
  // The exclusive lock has one holder: the value that refused on the most nodes. Another
  // contender's leftover on a node it does not hold is no holder, and refusals by
  // several values with none on a quorum are a split vote. A semaphore's or read-write
  // lock's refusals may name several holders that all hold; a key set's name the holder
  // of one of its keys each: every refusal counts.
  const std::string* most = nullptr;
  int most_count = 0;
  int held = 0;
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    if (outcomes[i].status != NodeStatus::held) continue;
    ++held;
    if (held_ || outcomes[i].holder.empty()) continue;
    int same = 0;
    for (std::size_t j = i; j < outcomes.size(); ++j) {
      if (outcomes[j].status == NodeStatus::held && outcomes[j].holder == outcomes[i].holder) {
        ++same;
      }
    }
    if (same > most_count) most = &outcomes[i].holder, most_count = same;
  }
  Holder holder;
  const int counted = held_ ? held : most_count;
  holder.on_quorum = counted >= refused.quorum && counted > 0;
  if (!holder.on_quorum) return holder;
  for (const auto& outcome : outcomes) {
    if (outcome.status != NodeStatus::held) continue;
    if (most != nullptr && outcome.holder != *most) continue;
    if (holder.value.empty() && !outcome.holder.empty()) holder.value = outcome.holder;
    if (outcome.remaining_ttl.count() >= 0 &&
        (!holder.expires_in || outcome.remaining_ttl < *holder.expires_in)) {
      holder.expires_in = outcome.remaining_ttl;
    }
  }
  return holder;
}

}  // namespace redlock::detail
