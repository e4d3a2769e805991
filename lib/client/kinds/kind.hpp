#pragma once
// A kind of lock: the exclusive lock on one key, a permit of a counting semaphore, a
// reader or the writer of a read-write lock, a key set. Every lock is one Kind value, the
// exclusive lock's like any other: what it holds (its key or keys, a semaphore's K, a
// writer's intent) and its quorum, and, through its entry of one table (kind.cpp), its
// calls on a member (the scripts, their keys and arguments: assembled there and nowhere
// else), how their replies read, how a refusal names the holder, and the choices of the
// acquisition that are its own. Data and dispatch only: every decision is
// core::Acquisition's; a Node only sends what a kind assembled (member/node.hpp).

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "member/node.hpp"

namespace redlock::detail {

class Engine;
struct RoundResult;

class Kind {
 public:
  /// The exclusive lock on `key`.
  static Kind exclusive(std::string key);
  /// One of `permits` permits of the counting semaphore `key`.
  static Kind permit(std::string key, int permits, int quorum);
  /// A shared hold of the read-write lock `key`.
  static Kind reader(std::string key, int quorum);
  /// The exclusive hold of the read-write lock `key`. `intent`: the id of its intent
  /// entry, the same for every attempt of one acquisition (a waiting writer keeps new
  /// readers out, scripts/kind_scripts.hpp); `intent_ttl`: how long one attempt's intent
  /// lasts on a node unless refreshed by the next attempt.
  static Kind writer(std::string key, int quorum, std::string intent,
                     std::chrono::milliseconds intent_ttl);
  /// Exclusive locks on every one of `keys` (in the caller's order, without duplicates,
  /// at least one) taken as one.
  static Kind key_set(std::vector<std::string> keys, int quorum);

  /// The exclusive lock on no key yet (a LockState before its acquisition hands it one).
  Kind();

  /// The key the waiter listens on (a key set's first).
  const std::string& key() const noexcept { return key_; }
  /// That key's storage, taken by a lock that is going (its kind is not used again).
  std::string release_key() noexcept { return std::move(key_); }
  /// Every key it holds, in the caller's order: one but for a key set.
  std::span<const std::string> keys() const noexcept;
  /// How messages name it: `lock "k"`, `read lock "k"`, `semaphore "k" (3 permits)`...
  std::string describe() const;
  /// The quorum of every round on this lock (acquire, extend, release); 0 = the client's.
  int quorum() const noexcept { return quorum_; }
  /// A semaphore's K; 0 for the other kinds.
  int permits() const noexcept { return permits_; }
  /// A writer's intent id and TTL; empty and 0 for the other kinds.
  const std::string& intent() const noexcept;
  std::chrono::milliseconds intent_ttl() const noexcept;
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
  std::size_t key_count() const noexcept { return keys().size(); }

  // --- its calls on one member ------------------------------------------------------------
  /// What one attempt sends every member: `value` for `ttl`, with a fencing token or not;
  /// `holder_ttl`: how a refusal's TTL is learnt where the member cannot tell it with the
  /// refusal (Command::by_set_nx_get). Its texts are made once for the round.
  class Attempt {
   public:
    Attempt(std::string_view value, std::chrono::milliseconds ttl, bool fencing,
            HolderTtl holder_ttl) noexcept;
    Attempt(const Attempt&) = delete;
    Attempt& operator=(const Attempt&) = delete;

    std::string_view value;
    bool fencing;
    HolderTtl holder_ttl;
    /// The TTL in decimal milliseconds.
    std::string_view ttl_ms() const noexcept { return {ttl_text_, ttl_length_}; }

   private:
    char ttl_text_[24];
    std::size_t ttl_length_;
  };
  inline void send_acquire(Node& node, const Attempt& attempt, std::chrono::milliseconds timeout,
                           NodeCallback&& done) const;
  /// The owner-checked extension of `value`'s hold to `ttl`.
  inline void send_extend(Node& node, std::string_view value, std::chrono::milliseconds ttl,
                          std::chrono::milliseconds timeout, NodeCallback&& done) const;
  /// The fencing write-back of `acquired`'s tokens for `value`.
  inline void send_write_back(Node& node, std::string_view value, const RoundResult& acquired,
                              std::chrono::milliseconds timeout, NodeCallback&& done) const;
  /// The owner-checked release of `value`'s hold. `keep_intent`: a writer's failed
  /// attempt that may be retried keeps its intent (it must keep new readers out meanwhile).
  inline void send_release(Node& node, std::string_view value, Announce announce,
                           std::chrono::milliseconds timeout, NodeCallback&& done,
                           bool keep_intent = false) const;
  /// A writer that gives up withdraws its intent from every node.
  void withdraw_intent(Engine& engine, std::chrono::milliseconds timeout) const;

  // --- what its rounds' replies say -------------------------------------------------------
  /// A key set's grants must carry one token per key.
  bool token_count_mismatch(const RoundResult& acquired) const;
  /// The tokens a reached round hands out: one, or one per key of a key set.
  void tokens_of(const RoundResult& acquired, std::optional<std::uint64_t>& token,
                 std::vector<std::uint64_t>& tokens) const;
  /// The fencing token of `key` among those tokens_of() handed out, if it holds `key`.
  std::optional<std::uint64_t> token_of(std::string_view key, std::optional<std::uint64_t> token,
                                        const std::vector<std::uint64_t>& tokens) const;

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

  struct Entry;

 private:
  // What only some kinds hold: a key set's keys, a writer's intent.
  struct Extra {
    std::vector<std::string> keys;
    std::string intent;
    std::chrono::milliseconds intent_ttl{0};
  };

  explicit Kind(const Entry& entry) : entry_(&entry) {}

  const Entry* entry_;
  int quorum_ = 0;
  int permits_ = 0;
  std::string key_;                     // a key set's first
  std::shared_ptr<const Extra> extra_;  // null for the kinds that hold none of it
};

/// One kind's entry in the table of kinds (kind.cpp): its calls on a member, each of which
/// assembles its script's keys and arguments (the only code that does), and the choices
/// that are its own.
struct Kind::Entry {
  std::string (*describe)(const Kind& kind);
  void (*acquire)(const Kind& kind, Node& node, const Attempt& attempt,
                  std::chrono::milliseconds timeout, NodeCallback&& done);
  void (*extend)(const Kind& kind, Node& node, std::string_view value,
                 std::chrono::milliseconds ttl, std::chrono::milliseconds timeout,
                 NodeCallback&& done);
  /// Null for the kinds that carry no fencing token (permits, readers).
  void (*write_back)(const Kind& kind, Node& node, std::string_view value,
                     const RoundResult& acquired, std::chrono::milliseconds timeout,
                     NodeCallback&& done);
  void (*release)(const Kind& kind, Node& node, std::string_view value, Announce announce,
                  std::chrono::milliseconds timeout, NodeCallback&& done, bool keep_intent);
  /// One holder at a time (the exclusive lock): the holder a refusal names is the value
  /// that refused on the most nodes. Else every refusal names a holder that holds.
  bool one_holder;
  bool sleeps_on_holder;
  bool keeps_wake;
  bool queues_behind_waiters;
  /// A writer's: an intent entry each attempt refreshes, withdrawn when it gives up.
  bool has_intent;
  /// A key set's: a fencing token per key.
  bool token_per_key;
};

void Kind::send_acquire(Node& node, const Attempt& attempt, std::chrono::milliseconds timeout,
                        NodeCallback&& done) const {
  entry_->acquire(*this, node, attempt, timeout, std::move(done));
}

void Kind::send_extend(Node& node, std::string_view value, std::chrono::milliseconds ttl,
                       std::chrono::milliseconds timeout, NodeCallback&& done) const {
  entry_->extend(*this, node, value, ttl, timeout, std::move(done));
}

void Kind::send_write_back(Node& node, std::string_view value, const RoundResult& acquired,
                           std::chrono::milliseconds timeout, NodeCallback&& done) const {
  entry_->write_back(*this, node, value, acquired, timeout, std::move(done));
}

void Kind::send_release(Node& node, std::string_view value, Announce announce,
                        std::chrono::milliseconds timeout, NodeCallback&& done,
                        bool keep_intent) const {
  entry_->release(*this, node, value, announce, timeout, std::move(done), keep_intent);
}

/// Reads the reply of a semaphore's, read-write lock's or key set's script
/// (scripts/kind_scripts.hpp).
NodeReply read_kind_reply(const redisReply* reply, std::string_view where);

}  // namespace redlock::detail
