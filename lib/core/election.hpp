#pragma once
// The rules of leader election on the quorum, without I/O (redlock::Election uses them).
// A leader is the holder of the election's key, an exclusive lock taken with fencing;
// its term is the lock's fencing token. Beside the key, at "<key>:leader", each member
// keeps the leader record "<lock value> <term> <identity>", written by the leader with an
// owner-checked script after it won. Who leads is read from both on every member: a
// leader is the one lock value a quorum of members holds, and its identity and term are
// those of a record that names that value.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/validity.hpp"

namespace redlock::core {

/// One leader record, as stored on a member.
struct LeaderRecord {
  std::string value;  ///< The leader's lock value: the record is valid only beside it.
  std::uint64_t term = 0;
  std::string identity;
};

/// "<value> <term> <identity>". Lock values are hex, terms decimal: neither holds a space,
/// so any identity (spaces included) reads back whole.
std::string format_leader_record(const LeaderRecord& record);
/// The record of `text`, or nullopt when it is not one (empty, no term, a term that is
/// not a positive decimal number).
std::optional<LeaderRecord> parse_leader_record(std::string_view text);

/// What one member answered to a read of the key and its record.
struct MemberLeaderView {
  bool answered = false;  ///< False for a member that failed (timeout, error).
  std::string value;      ///< The key's holder there; empty when the key is free.
  /// Time left on the key on the member's clock; -1 without expiry.
  std::chrono::milliseconds remaining_ttl{-1};
  std::string record;  ///< The member's leader record, raw; empty when it has none.
};

/// Who leads, as a quorum reports it.
struct LeaderView {
  std::string identity;
  std::uint64_t term = 0;
  std::string value;  ///< The leader's lock value.
  /// How long, from the read's start, a quorum of members still holds the key for the
  /// leader at least: the quorum-th longest remaining TTL among the members that hold it,
  /// minus the time the read took and the drift allowance of `ttl_hint`. Never negative.
  std::chrono::milliseconds validity{0};
};

/// The leader that `members` report, or nullopt when none does: no value holds the key on
/// `quorum` members, or none of those members has a record naming that value (the leader
/// has not written it yet). `elapsed`: how long the read took (charged to the validity).
std::optional<LeaderView> decide_leader(const std::vector<MemberLeaderView>& members, int quorum,
                                        std::chrono::milliseconds elapsed,
                                        const DriftPolicy& drift);

/// The order in which an observer reports leaders: every change, never a term lower than
/// one already reported. The first read is reported whatever it shows; a read that shows
/// no leader is reported once after a leader (the seat is empty) and does not lower the
/// bar; the same term is reported again only after such an empty seat.
class LeaderReports {
 public:
  /// Whether `seen` (the latest read) is to be reported; records it when it is.
  bool should_report(const std::optional<LeaderView>& seen);
  /// The highest term reported so far (0 before any).
  std::uint64_t highest_term() const noexcept { return highest_term_; }

 private:
  std::uint64_t highest_term_ = 0;
  bool reported_any_ = false;
  bool last_was_leader_ = false;
};

}  // namespace redlock::core
