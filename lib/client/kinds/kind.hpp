#pragma once
// What one kind of lock (exclusive, permit, reader, writer, key set) brings to the
// acquisition every kind shares (client/operations/acquire.hpp): its scripts, its quorum, how a
// refusal reads, and a writer's intent. Data and dispatch only: every decision is
// core::Acquisition's.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "client/util/function_ref.hpp"
#include "member/node.hpp"

namespace redlock::detail {

class Engine;
struct Held;
struct RoundResult;

/// How messages name the lock `held` holds on `key` (the exclusive lock when null):
/// `"k"`, `read lock "k"`, `semaphore "k" (3 permits)`...
std::string describe_lock(const Held* held, std::string_view key);
/// The quorum of every round on it; 0 = the client's.
int quorum_of(const Held* held) noexcept;
/// Calls `each` with every key it holds (a key set's, or `key`).
void for_each_key(const Held* held, const std::string& key,
                  FunctionRef<void(const std::string&)> each);
/// The owner-checked extend and release of that lock on one node.
void send_extend(Node& node, const Held* held, std::string_view key, std::string_view value,
                 std::chrono::milliseconds ttl, std::chrono::milliseconds timeout,
                 NodeCallback done);
/// `keep_intent`: a writer's failed attempt that may be retried keeps its intent.
void send_release(Node& node, const Held* held, std::string_view key, std::string_view value,
                  Announce announce, std::chrono::milliseconds timeout, NodeCallback done,
                  bool keep_intent = false);

class Kind {
 public:
  /// The exclusive lock on `key`.
  static Kind exclusive(std::string key);
  /// A primitive of the family (client/kinds/held.hpp).
  static Kind of(std::shared_ptr<const Held> held);

  /// The key the waiter listens on (a key set's first).
  const std::string& key() const noexcept;
  /// The key, moved out (the acquisition's last use of it).
  std::string take_key();
  /// Null for the exclusive lock.
  const std::shared_ptr<const Held>& held() const noexcept { return held_; }
  /// How messages name it: `lock "k"`, `read lock "k"`, `semaphore "k" (3 permits)`...
  std::string describe() const;
  /// The quorum of every round on this lock; 0 = the client's.
  int quorum() const noexcept;
  /// Fencing applies (the write-back runs): exclusive locks, writers and key sets.
  bool fences() const noexcept;
  /// A waiter sleeps until a holder's entry can expire; a key set listens on one of its
  /// keys only, so it retries at the ordinary delay instead.
  bool sleeps_on_holder() const noexcept;
  /// A waiting writer refreshes its intent by attempting again within this span.
  std::optional<std::chrono::milliseconds> refresh_within() const noexcept;
  /// A holder keeps the wake it was given; a reader passes it on (the next reader may
  /// share the lock too).
  bool keeps_wake() const noexcept;
  /// A newcomer waits behind this client's earlier waiters of the key instead of racing
  /// the one woken next: one holder frees the key for one waiter. Not a semaphore's: a
  /// permit freed while others wait is anyone's, and a holder that asks again at once
  /// takes it without a wake's round trip (half the cycles of 16 waiters on 4 permits
  /// when it queued).
  bool queues_behind_waiters() const noexcept;
  std::size_t key_count() const noexcept;

  void send_acquire(Node& node, std::string_view value, std::chrono::milliseconds ttl, bool fencing,
                    HolderTtl holder_ttl, std::chrono::milliseconds timeout,
                    NodeCallback done) const;
  /// The fencing write-back of `acquired`'s tokens for `value`.
  void send_write_back(Node& node, std::string_view value, const RoundResult& acquired,
                       std::chrono::milliseconds timeout, NodeCallback done) const;
  /// `keep_intent`: a writer's failed attempt that may be retried keeps its intent.
  void send_release(Node& node, std::string_view value, Announce announce,
                    std::chrono::milliseconds timeout, NodeCallback done,
                    bool keep_intent = false) const;
  /// A writer that gives up withdraws its intent from every node.
  void withdraw_intent(Engine& engine, std::chrono::milliseconds timeout) const;

  /// A key set's grants must carry one token per key.
  bool token_count_mismatch(const RoundResult& acquired) const;
  /// The tokens a reached round hands out: one, or one per key of a key set.
  void tokens_of(const RoundResult& acquired, std::optional<std::uint64_t>& token,
                 std::vector<std::uint64_t>& tokens) const;

  struct Holder {
    /// Other holders refused on a quorum of nodes (not a split vote).
    bool on_quorum = false;
    /// The shortest remaining TTL among them, if the nodes told it.
    std::optional<std::chrono::milliseconds> expires_in;
    /// The exclusive lock's: the value that refused on the most nodes (a contender's
    /// leftover on another node is not the holder); for the others the first one's.
    std::string value;
  };
  Holder holder_on_quorum(const RoundResult& refused) const;

 private:
  std::string key_;  // the exclusive lock's
  std::shared_ptr<const Held> held_;
};

}  // namespace redlock::detail
