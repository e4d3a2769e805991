#pragma once
// Leader election on the Redlock quorum (docs/election.md): a campaign is a waiting,
// fenced, auto-extended lock of the election's key, whose fencing token is the leader's
// term; who leads is read back from a quorum.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>

#include <redlock/client.hpp>
#include <redlock/export.hpp>
#include <redlock/lock.hpp>
#include <redlock/result.hpp>

namespace redlock {

/// Who leads an election, as a quorum of members reports it (Election::leader()).
struct Leader {
  /// The leader's identity, as given to its Election.
  std::string identity;
  /// The leader's term: greater than every earlier leader's of the same key.
  std::uint64_t term = 0;
  /// How long a quorum still holds the key for this leader at least, from the read's
  /// start (its own elapsed time and the drift allowance taken off). A live leader
  /// extends it; a crashed one's runs out.
  std::chrono::milliseconds validity{0};
  /// The leader's lock value (Lock::value()), e.g. for `redlock release`.
  std::string value;
};

/// This candidate's leadership, won by Election::campaign(). Move-only; the destructor
/// resigns (releases the key, waiting at most one node_timeout, never throwing).
///
/// Thread-safety: as Lock's (any thread but the client's loop thread); stop_token() and
/// the accessors may be called from any thread.
class REDLOCK_EXPORT Leadership {
 public:
  /// Takes over the leadership; the moved-from object holds none.
  Leadership(Leadership&&) noexcept;
  /// Resigns the leadership this object had, then takes over `other`'s.
  Leadership& operator=(Leadership&&) noexcept;
  Leadership(const Leadership&) = delete;
  Leadership& operator=(const Leadership&) = delete;
  ~Leadership();

  /// The term: the fencing token of the election's key for this leadership, greater than
  /// every earlier leader's term. Hand it to storage to refuse the writes of an earlier
  /// leader (FencedStore, docs/fencing.md).
  std::uint64_t term() const noexcept;
  /// The identity this candidate campaigned with.
  const std::string& identity() const noexcept;
  /// The election's key.
  const std::string& key() const noexcept;
  /// Validity left now: how long this candidate may still act as the leader. Zero once
  /// lost, resigned, or expired.
  std::chrono::milliseconds validity() const noexcept;
  /// Requested when the leadership ends: the watchdog lost the key (requested on the
  /// client's loop thread while validity is left, unless that thread itself was stalled
  /// past it), or resign() / the destructor ended it. A std::stop_callback registered on
  /// it must not block. Client::close() stops the watchdog without requesting it: the
  /// leadership then ends when validity() reaches zero.
  std::stop_token stop_token() const noexcept;
  /// True once the watchdog lost the key (the stop token is requested too).
  bool lost() const noexcept;
  /// Ends the leadership: the stop token is requested, then the key is released on every
  /// member (Lock::unlock()), which announces the release: another candidate of any
  /// client waiting in campaign() is woken at once. The leader record stays beside the
  /// key but names nobody once the key is gone. Calling it again after a confirmed
  /// release succeeds without sending anything.
  Result<void> resign();
  /// The underlying lock, for its nodes() or value().
  const Lock& lock() const noexcept;

 private:
  friend class Election;
  struct State;
  explicit Leadership(std::unique_ptr<State> state) noexcept;
  std::unique_ptr<State> state_;
};

/// One candidate's view of an election: the key all candidates share, this candidate's
/// identity (a string the others read: host name, pod, address) and the TTL of its
/// leadership, over a client's quorum.
///
/// Thread-safety: every method may be called from any thread except the client's loop
/// thread (on it the synchronous methods, observe() included, return
/// errc::invalid_argument at once); after close() they return errc::cancelled (the
/// client's edge rules). An Election holds no mutable state, so one object may serve
/// several threads at once.
class REDLOCK_EXPORT Election {
 public:
  /// Throws std::invalid_argument for a null client, an empty key or identity, or an
  /// identity with a line break. `ttl` as LockOptions::ttl, with the room auto_extend
  /// needs (campaign() reports a ttl too short for the client's node_timeout).
  Election(std::shared_ptr<Client> client, std::string key, std::string identity,
           std::chrono::milliseconds ttl = std::chrono::milliseconds(30'000));

  /// Waits until this candidate leads, `stop` is requested (errc::cancelled) or `wait`
  /// has passed (the last attempt's error: errc::conflict while another leads). It is
  /// client->lock(key, {.ttl, .wait, .fencing = true, .auto_extend = true}): woken at once
  /// by a resigning leader's release, re-checking a crashed leader's key as lock() does.
  /// Once the key is won, the leader record ("<value> <term> <identity>") is written
  /// beside it on every member where the key holds this candidate's value; if that fails
  /// on a quorum the key is released and the error returned.
  Result<Leadership> campaign(std::stop_token stop = {},
                              std::chrono::milliseconds wait = std::chrono::milliseconds::max());
  /// campaign() without waiting: `done` runs exactly once on the client's loop thread
  /// (as Client::lock_async's callback), never inside this call; after close() at once,
  /// with errc::cancelled. There resign() is refused (a synchronous call); destroying the
  /// Leadership there releases the key without waiting, as ~Lock does. An empty `done`
  /// campaigns for nobody: nothing is done (the client's edge rules).
  void campaign_async(std::stop_token stop, std::chrono::milliseconds wait,
                      std::function<void(Result<Leadership>)> done);

  /// Who leads now, read from every member (each up to the client's diagnostic
  /// deadline): the one lock value that holds the key on a quorum and a record that names
  /// it, or nullopt when no value holds a quorum (nobody leads, or a leader is being
  /// replaced) or its record is not written yet. errc::quorum_unreachable when fewer than
  /// a quorum of members answered; errc::wrong_kind when the key is another kind of lock.
  Result<std::optional<Leader>> leader() const;

  /// Reports every change of leader to `on_change`, on the calling thread, until `stop`
  /// is requested (then returns success) or the client closes (errc::cancelled). The
  /// first read is reported whatever it shows; afterwards a new leader (a higher term),
  /// or an empty seat (nullopt) once after a leader. Terms are reported in increasing
  /// order: never one lower than a term already reported. Reads that fail (fewer than a
  /// quorum answered) report nothing. It reads leader() when a new leader's campaign or
  /// the key's release is announced (by any client), after a release a few times more at
  /// 5 ms doubling until the successor shows, and otherwise every `every` (0 = a third of
  /// the ttl, at most a second): a crashed leader's expiry is announced by nobody and is
  /// seen up to `every` late.
  Result<void> observe(std::stop_token stop,
                       const std::function<void(const std::optional<Leader>&)>& on_change,
                       std::chrono::milliseconds every = std::chrono::milliseconds(0)) const;

  /// The election's key.
  const std::string& key() const noexcept { return key_; }
  /// This candidate's identity.
  const std::string& identity() const noexcept { return identity_; }
  /// The TTL of a leadership.
  std::chrono::milliseconds ttl() const noexcept { return ttl_; }

 private:
  std::shared_ptr<Client> client_;
  std::string key_;
  std::string identity_;
  std::chrono::milliseconds ttl_;
};

}  // namespace redlock
