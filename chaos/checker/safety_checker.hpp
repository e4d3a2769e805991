#pragma once
// The safety checker: reads the event records of a chaos run (events.hpp) and finds what
// Redlock with fencing must never allow.
//
//  - violations: what each primitive's rule forbids (primitive.hpp), judged per key over
//    validity intervals, i.e. over the times holders were entitled to act:
//      * pairs of holds of one key that overlap although they may not share: an
//        exclusive lock, a key set (a hold of each of its keys) or a leadership of an
//        election with anything, a writer with a reader or another writer;
//      * permits: each permit hold that began while K or more permit holds of its key
//        were live, K being the one it was acquired with (what the nodes checked when
//        they admitted it).
//    Each is counted under the primitive of the later hold, the one admitted against the
//    rule. Intervals are half-open: one ending exactly when the next starts is not an
//    overlap.
//  - token_regressions: locks whose fencing token is not greater than the token of every
//    lock of the same key that started earlier (only locks that carry a token count; a
//    leadership's term is its token, so a term no greater than an earlier leader's counts).
//  - stale_writes_accepted: accepted fenced writes whose token is below a token that the
//    store had already accepted for the same key. "Already" is judged conservatively
//    from the records: the higher write was answered before the lower one was sent.
//    Writes that overlap in time may have been applied in either order, so they are
//    never counted. Must be 0 in every scenario, in or out of the algorithm's model.
//
// Empty holds (end_ns <= start_ns, a lock with no validity left) cannot overlap anything;
// they are counted as empty_holds and still take part in the token order.
//
// Pure computation: add records in any order, then ask for the report.

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "checker/events.hpp"

namespace redlock::chaos {

/// Two locks of one key that were both held at some instant.
struct Overlap {
  HoldEvent first;  ///< the one that started first
  HoldEvent second;
};

/// `admitted`, a permit of K, began while `holders` (K or more permits of its key) were
/// live.
struct ExcessPermit {
  HoldEvent admitted;
  std::vector<HoldEvent> holders;
};

/// `later` started after `earlier` but its token is not greater.
struct TokenRegression {
  HoldEvent earlier;  ///< the earlier lock with the highest token so far
  HoldEvent later;
};

/// `stale` was accepted although `newer`, with a higher token, had been accepted before
/// it was sent.
struct StaleWrite {
  WriteEvent newer;
  WriteEvent stale;
};

struct SafetyReport {
  std::uint64_t holds = 0;  ///< hold records
  /// Distinct locks per key (segments with one key and value merged; a key set counts
  /// once for each of its keys).
  std::uint64_t locks = 0;
  std::uint64_t empty_holds = 0;
  std::uint64_t acquisitions = 0;  ///< attempts with result "acquired"
  std::map<std::string, std::uint64_t> acquisitions_by_primitive;
  std::uint64_t conflicts = 0;
  std::uint64_t errors = 0;
  std::map<std::string, std::uint64_t> error_codes;  ///< errors by code ("" when none)
  std::uint64_t violations = 0;                      ///< overlapping pairs plus permits beyond K
  /// Violations by the primitive of the hold admitted against the rule (names as in
  /// primitive.hpp); only primitives with a violation appear.
  std::map<std::string, std::uint64_t> violations_by_primitive;
  std::uint64_t token_regressions = 0;
  std::uint64_t writes_accepted = 0;
  std::uint64_t stale_writes_accepted = 0;
  std::uint64_t stale_writes_rejected = 0;
  std::uint64_t writes_failed = 0;  ///< neither accepted nor refused as stale
  std::uint64_t malformed_lines = 0;
  std::uint64_t ignored_records = 0;
  std::vector<std::string> malformed_examples;  ///< "why: line"

  /// The first few of each finding, for a human to look at.
  std::vector<Overlap> overlap_examples;
  std::vector<ExcessPermit> excess_permit_examples;
  std::vector<TokenRegression> regression_examples;
  std::vector<StaleWrite> stale_write_examples;

  /// No violation, no token regression, no stale write accepted.
  bool safe() const {
    return violations == 0 && token_regressions == 0 && stale_writes_accepted == 0;
  }
};

class SafetyChecker {
 public:
  /// `max_examples`: how many of each finding the report keeps in full.
  explicit SafetyChecker(std::size_t max_examples = 10) : max_examples_(max_examples) {}

  void add(const Event& event);
  /// Parses one JSON line (event_json.hpp) and adds it; a malformed line is counted in
  /// the report, never thrown.
  void add_line(std::string_view line);

  SafetyReport report() const;

 private:
  std::size_t max_examples_;
  std::vector<HoldEvent> holds_;
  std::vector<WriteEvent> writes_;
  SafetyReport counts_;  // the counters that need no analysis
};

}  // namespace redlock::chaos
