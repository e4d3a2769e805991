// The safety checker on hand-made histories: it must find each kind of finding, count
// them exactly, and stay silent on a clean history.

#include <gtest/gtest.h>

#include "checker/event_json.hpp"
#include "checker/report_json.hpp"
#include "checker/safety_checker.hpp"

namespace redlock::chaos {
namespace {

HoldEvent hold(std::string key, std::string value, std::int64_t start, std::int64_t end,
               std::optional<std::uint64_t> token = std::nullopt, std::string client = "c") {
  return HoldEvent{std::move(key), std::move(client), std::move(value), start, end, token};
}

HoldEvent permit(std::string key, std::string value, int permits, std::int64_t start,
                 std::int64_t end) {
  HoldEvent h = hold(std::move(key), std::move(value), start, end);
  h.primitive = Primitive::permit;
  h.permits = permits;
  return h;
}

HoldEvent reader(std::string key, std::string value, std::int64_t start, std::int64_t end) {
  HoldEvent h = hold(std::move(key), std::move(value), start, end);
  h.primitive = Primitive::reader;
  return h;
}

HoldEvent writer(std::string key, std::string value, std::int64_t start, std::int64_t end,
                 std::optional<std::uint64_t> token = std::nullopt) {
  HoldEvent h = hold(std::move(key), std::move(value), start, end, token);
  h.primitive = Primitive::writer;
  return h;
}

HoldEvent key_set(std::vector<std::string> keys, std::string value, std::int64_t start,
                  std::int64_t end) {
  HoldEvent h = hold(keys.front(), std::move(value), start, end);
  h.primitive = Primitive::multi;
  h.keys = std::move(keys);
  return h;
}

HoldEvent leadership(std::string key, std::string value, std::uint64_t term, std::int64_t start,
                     std::int64_t end, std::string client = "candidate") {
  HoldEvent h = hold(std::move(key), std::move(value), start, end, term, std::move(client));
  h.primitive = Primitive::election;
  return h;
}

WriteEvent write(std::string key, std::uint64_t token, bool accepted, std::int64_t start,
                 std::int64_t end, bool stale = false) {
  return WriteEvent{std::move(key), "c", token, accepted, stale, start, end};
}

SafetyReport check(const std::vector<Event>& events) {
  SafetyChecker checker;
  for (const auto& e : events) checker.add(e);
  return checker.report();
}

TEST(SafetyChecker, CleanHistoryHasNoFindings) {
  SafetyChecker checker;
  // Ten clients take turns on two keys; each lock ends exactly when the next starts.
  std::uint64_t token = 0;
  for (int i = 0; i < 100; ++i) {
    const std::string client = "client-" + std::to_string(i % 10);
    for (const std::string key : {"a", "b"}) {
      checker.add(hold(key, key + std::to_string(i), i * 100, (i + 1) * 100, ++token, client));
      checker.add(write(key, token, true, i * 100 + 10, i * 100 + 20));
      checker.add(AttemptEvent{key, client, AttemptResult::acquired, "", i * 100});
    }
    checker.add(AttemptEvent{"a", client, AttemptResult::conflict, "", i * 100 + 50});
  }
  checker.add(AttemptEvent{"a", "x", AttemptResult::error, "quorum_unreachable", 1});
  checker.add(AttemptEvent{"a", "x", AttemptResult::error, "quorum_unreachable", 2});
  checker.add(write("a", 1, false, 50'000, 50'001, /*stale=*/true));
  checker.add(write("a", 500, false, 50'000, 50'001));

  const SafetyReport r = checker.report();
  EXPECT_TRUE(r.safe());
  EXPECT_EQ(r.violations, 0u);
  EXPECT_EQ(r.token_regressions, 0u);
  EXPECT_EQ(r.stale_writes_accepted, 0u);
  EXPECT_EQ(r.stale_writes_rejected, 1u);
  EXPECT_EQ(r.writes_failed, 1u);
  EXPECT_EQ(r.writes_accepted, 200u);
  EXPECT_EQ(r.holds, 200u);
  EXPECT_EQ(r.locks, 200u);
  EXPECT_EQ(r.acquisitions, 200u);
  EXPECT_EQ(r.conflicts, 100u);
  EXPECT_EQ(r.errors, 2u);
  EXPECT_EQ(r.error_codes.at("quorum_unreachable"), 2u);
}

TEST(SafetyChecker, EmptyHistory) {
  const SafetyReport r = SafetyChecker().report();
  EXPECT_TRUE(r.safe());
  EXPECT_EQ(r.holds, 0u);
}

TEST(SafetyChecker, CatchesAnOverlapOfOneNanosecond) {
  const SafetyReport r =
      check({hold("k", "v1", 0, 1000, 1, "p1"), hold("k", "v2", 999, 2000, 2, "p2")});
  EXPECT_FALSE(r.safe());
  EXPECT_EQ(r.violations, 1u);
  ASSERT_EQ(r.overlap_examples.size(), 1u);
  EXPECT_EQ(r.overlap_examples[0].first.client, "p1");
  EXPECT_EQ(r.overlap_examples[0].second.client, "p2");
  EXPECT_EQ(r.token_regressions, 0u);
}

TEST(SafetyChecker, TouchingIntervalsAreNotOverlaps) {
  EXPECT_EQ(check({hold("k", "v1", 0, 1000), hold("k", "v2", 1000, 2000)}).violations, 0u);
  // In any record order.
  EXPECT_EQ(check({hold("k", "v2", 1000, 2000), hold("k", "v1", 0, 1000)}).violations, 0u);
}

TEST(SafetyChecker, ContainedAndIdenticalIntervalsOverlap) {
  EXPECT_EQ(check({hold("k", "outer", 0, 1000), hold("k", "inner", 100, 200)}).violations, 1u);
  EXPECT_EQ(check({hold("k", "v1", 0, 1000), hold("k", "v2", 0, 1000)}).violations, 1u);
}

TEST(SafetyChecker, DifferentKeysNeverConflict) {
  EXPECT_EQ(check({hold("a", "v1", 0, 1000, 5), hold("b", "v2", 0, 1000, 1)}).violations, 0u);
  EXPECT_EQ(check({hold("a", "v1", 0, 1000, 5), hold("b", "v2", 0, 1000, 1)}).token_regressions,
            0u);
}

TEST(SafetyChecker, CountsEveryOverlappingPair) {
  // Three mutually overlapping locks: three pairs; a fourth overlapping only the last.
  const SafetyReport r = check({hold("k", "a", 0, 100), hold("k", "b", 10, 110),
                                hold("k", "c", 20, 120), hold("k", "d", 115, 200)});
  EXPECT_EQ(r.violations, 4u);
}

TEST(SafetyChecker, ManyClientsInTurnAndOneIntruder) {
  std::vector<Event> events;
  for (int i = 0; i < 5000; ++i) {
    events.push_back(hold("k", "v" + std::to_string(i), i * 10, i * 10 + 10,
                          static_cast<std::uint64_t>(i + 1), "client-" + std::to_string(i % 64)));
  }
  EXPECT_TRUE(check(events).safe());
  // An ex-holder that believes it still holds the lock long after its turn.
  // An ex-holder (token 2000, from its turn at 19990) that wakes up believing it still
  // holds the lock: it overlaps the holds starting at 25000, 25010, 25020 and 25030, and
  // its token is below every token issued since.
  events.push_back(hold("k", "intruder", 25'000, 25'035, 2'000, "paused"));
  const SafetyReport r = check(events);
  EXPECT_EQ(r.violations, 4u);
  EXPECT_EQ(r.token_regressions, 1u);
  EXPECT_EQ(r.overlap_examples.size(), 4u);
}

TEST(SafetyChecker, SegmentsOfOneLockAreOneLock) {
  // An extended lock logged as two overlapping segments is no violation...
  EXPECT_EQ(check({hold("k", "v", 0, 100, 7), hold("k", "v", 90, 200, 7)}).violations, 0u);
  EXPECT_EQ(check({hold("k", "v", 0, 100, 7), hold("k", "v", 90, 200, 7)}).locks, 1u);
  // ... but the merged lock conflicts with another one inside its extension.
  const SafetyReport r =
      check({hold("k", "v", 0, 100, 7), hold("k", "w", 150, 160, 8), hold("k", "v", 90, 200, 7)});
  EXPECT_EQ(r.violations, 1u);
  EXPECT_EQ(r.holds, 3u);
  EXPECT_EQ(r.locks, 2u);
}

TEST(SafetyChecker, HoldsWithoutValueAreDistinctLocks) {
  EXPECT_EQ(check({hold("k", "", 0, 100), hold("k", "", 50, 150)}).violations, 1u);
}

TEST(SafetyChecker, EmptyHoldsNeverOverlap) {
  const SafetyReport r = check({hold("k", "v1", 0, 100, 1), hold("k", "v2", 50, 50, 2),
                                hold("k", "v3", 60, 40, 3), hold("k", "v4", 100, 200, 4)});
  EXPECT_EQ(r.violations, 0u);
  EXPECT_EQ(r.empty_holds, 2u);
  EXPECT_EQ(r.token_regressions, 0u);
}

TEST(SafetyChecker, CatchesATokenRegression) {
  const SafetyReport r = check({hold("k", "v1", 0, 100, 5), hold("k", "v2", 200, 300, 3)});
  EXPECT_EQ(r.violations, 0u);
  EXPECT_EQ(r.token_regressions, 1u);
  ASSERT_EQ(r.regression_examples.size(), 1u);
  EXPECT_EQ(*r.regression_examples[0].earlier.token, 5u);
  EXPECT_EQ(*r.regression_examples[0].later.token, 3u);
  EXPECT_FALSE(r.safe());
}

TEST(SafetyChecker, EqualTokensAreARegression) {
  EXPECT_EQ(check({hold("k", "v1", 0, 100, 5), hold("k", "v2", 200, 300, 5)}).token_regressions,
            1u);
}

TEST(SafetyChecker, TokensCompareWithTheHighestSoFar) {
  // 5, 3, 4, 6: both 3 and 4 are below 5.
  const SafetyReport r = check({hold("k", "a", 0, 10, 5), hold("k", "b", 10, 20, 3),
                                hold("k", "c", 20, 30, 4), hold("k", "d", 30, 40, 6)});
  EXPECT_EQ(r.token_regressions, 2u);
}

TEST(SafetyChecker, LocksWithoutTokensAreLeftOutOfTheTokenOrder) {
  EXPECT_EQ(check({hold("k", "a", 0, 10, 5), hold("k", "b", 10, 20), hold("k", "c", 20, 30, 6)})
                .token_regressions,
            0u);
}

TEST(SafetyChecker, CatchesAStaleWriteAccepted) {
  const SafetyReport r = check({write("k", 7, true, 0, 10), write("k", 5, true, 20, 30)});
  EXPECT_EQ(r.stale_writes_accepted, 1u);
  ASSERT_EQ(r.stale_write_examples.size(), 1u);
  EXPECT_EQ(r.stale_write_examples[0].newer.token, 7u);
  EXPECT_EQ(r.stale_write_examples[0].stale.token, 5u);
  EXPECT_FALSE(r.safe());
}

TEST(SafetyChecker, StaleWritesAreJudgedConservatively) {
  // Overlapping in time: the store may have applied 5 before 7.
  EXPECT_EQ(check({write("k", 7, true, 0, 10), write("k", 5, true, 5, 30)}).stale_writes_accepted,
            0u);
  // Answered exactly when the other was sent: still ambiguous.
  EXPECT_EQ(check({write("k", 7, true, 0, 10), write("k", 5, true, 10, 30)}).stale_writes_accepted,
            0u);
  // The same token again is allowed (>=), and so is a lower token on another key.
  EXPECT_EQ(check({write("k", 7, true, 0, 10), write("k", 7, true, 20, 30),
                   write("other", 1, true, 40, 50)})
                .stale_writes_accepted,
            0u);
  // A rejected higher write sets no bar.
  EXPECT_EQ(
      check({write("k", 9, false, 0, 10, true), write("k", 5, true, 20, 30)}).stale_writes_accepted,
      0u);
}

TEST(SafetyChecker, StaleWritesCountAgainstTheHighestAcceptedBefore) {
  const SafetyReport r = check({write("k", 3, true, 0, 1), write("k", 9, true, 2, 3),
                                write("k", 4, true, 5, 6), write("k", 8, true, 7, 8),
                                write("k", 10, true, 9, 10), write("k", 9, false, 11, 12, true)});
  EXPECT_EQ(r.stale_writes_accepted, 2u);  // 4 and 8, after 9
  EXPECT_EQ(r.stale_writes_rejected, 1u);
  EXPECT_EQ(r.writes_accepted, 5u);
}

// --- The family's rules ---------------------------------------------------------------------

TEST(FamilyRules, KOverlappingPermitsAreLegalAndTheNextOneIsNot) {
  const SafetyReport legal = check({permit("pool", "a", 2, 0, 100), permit("pool", "b", 2, 10, 110),
                                    // Starts as the first ends: two live again, not three.
                                    permit("pool", "c", 2, 100, 200)});
  EXPECT_TRUE(legal.safe());
  EXPECT_EQ(legal.violations, 0u);

  const SafetyReport excess =
      check({permit("pool", "a", 2, 0, 100), permit("pool", "b", 2, 10, 110),
             permit("pool", "c", 2, 99, 200)});
  EXPECT_FALSE(excess.safe());
  EXPECT_EQ(excess.violations, 1u);
  EXPECT_EQ(excess.violations_by_primitive.at("permit"), 1u);
  EXPECT_TRUE(excess.overlap_examples.empty()) << "permits may overlap; only their number counts";
  ASSERT_EQ(excess.excess_permit_examples.size(), 1u);
  EXPECT_EQ(excess.excess_permit_examples[0].admitted.value, "c");
  EXPECT_EQ(excess.excess_permit_examples[0].holders.size(), 2u);
}

TEST(FamilyRules, EveryPermitBeyondKCounts) {
  // K = 3: five at once are two too many.
  std::vector<Event> events;
  for (int i = 0; i < 5; ++i) events.push_back(permit("pool", "p" + std::to_string(i), 3, i, 100));
  EXPECT_EQ(check(events).violations, 2u);
  // K = 1 is the exclusive lock's rule.
  EXPECT_EQ(check({permit("one", "a", 1, 0, 100), permit("one", "b", 1, 50, 150)}).violations, 1u);
  EXPECT_EQ(check({permit("one", "a", 1, 0, 100), permit("one", "b", 1, 100, 150)}).violations, 0u);
}

TEST(FamilyRules, PermitsOfDifferentKeysAndSegmentsOfOnePermitDoNotAddUp) {
  EXPECT_EQ(check({permit("x", "a", 1, 0, 100), permit("y", "b", 1, 0, 100)}).violations, 0u);
  // An extended permit logged twice is one holder.
  EXPECT_EQ(check({permit("pool", "a", 2, 0, 100), permit("pool", "a", 2, 90, 200),
                   permit("pool", "b", 2, 95, 150)})
                .violations,
            0u);
}

TEST(FamilyRules, ReadersShareAndAWriterExcludesEveryone) {
  EXPECT_TRUE(check({reader("ledger", "r1", 0, 100), reader("ledger", "r2", 10, 110),
                     reader("ledger", "r3", 20, 120), writer("ledger", "w1", 120, 200, 1),
                     reader("ledger", "r4", 200, 300)})
                  .safe());

  // A reader admitted while a writer holds, and a writer admitted while a reader holds:
  // each is counted under the one admitted against the rule.
  const SafetyReport reader_in =
      check({writer("ledger", "w", 0, 100, 1), reader("ledger", "r", 50, 150)});
  EXPECT_EQ(reader_in.violations, 1u);
  EXPECT_EQ(reader_in.violations_by_primitive.at("reader"), 1u);
  const SafetyReport writer_in =
      check({reader("ledger", "r1", 0, 100), reader("ledger", "r2", 10, 100),
             writer("ledger", "w", 50, 150, 1)});
  EXPECT_EQ(writer_in.violations, 2u);
  EXPECT_EQ(writer_in.violations_by_primitive.at("writer"), 2u);
  ASSERT_EQ(writer_in.overlap_examples.size(), 2u);
  EXPECT_EQ(writer_in.overlap_examples[0].second.primitive, Primitive::writer);

  EXPECT_EQ(
      check({writer("ledger", "w1", 0, 100, 1), writer("ledger", "w2", 99, 150, 2)}).violations,
      1u);
}

TEST(FamilyRules, WritersTokensAreOrderedAndReadersHaveNone) {
  const SafetyReport r = check({writer("ledger", "w1", 0, 100, 5), reader("ledger", "r", 100, 150),
                                writer("ledger", "w2", 150, 200, 4)});
  EXPECT_EQ(r.violations, 0u);
  EXPECT_EQ(r.token_regressions, 1u);
}

TEST(FamilyRules, AKeySetHoldsEachOfItsKeys) {
  // {a, b} against an exclusive lock of b, and against one of c.
  const SafetyReport on_b = check({key_set({"a", "b"}, "s", 0, 100), hold("b", "x", 50, 150)});
  EXPECT_EQ(on_b.violations, 1u);
  EXPECT_EQ(on_b.violations_by_primitive.at("exclusive"), 1u);
  ASSERT_EQ(on_b.overlap_examples.size(), 1u);
  EXPECT_EQ(on_b.overlap_examples[0].first.key, "b");
  EXPECT_EQ(check({key_set({"a", "b"}, "s", 0, 100), hold("c", "x", 50, 150)}).violations, 0u);
  EXPECT_EQ(
      check({key_set({"a", "b"}, "s", 0, 100), key_set({"b", "a"}, "t", 100, 200)}).violations, 0u);

  // Two sets sharing one key conflict once, on that key; sharing both, once per key.
  const SafetyReport sets =
      check({key_set({"a", "b"}, "s", 0, 100), key_set({"c", "b"}, "t", 50, 150)});
  EXPECT_EQ(sets.violations, 1u);
  EXPECT_EQ(sets.violations_by_primitive.at("multi"), 1u);
  EXPECT_EQ(check({key_set({"a", "b"}, "s", 0, 100), key_set({"b", "a"}, "t", 50, 150)}).violations,
            2u);
  EXPECT_EQ(check({key_set({"a", "b"}, "s", 0, 100)}).locks, 2u);
}

TEST(FamilyRules, HoldsOfTwoKindsOnOneKeyConflict) {
  // A key serves one kind: a reader and a permit sharing a key were admitted by nodes
  // that should have answered wrong_kind.
  EXPECT_EQ(check({reader("k", "r", 0, 100), permit("k", "p", 5, 50, 150)}).violations, 1u);
  EXPECT_EQ(check({permit("k", "p", 5, 0, 100), hold("k", "x", 50, 150)}).violations, 1u);
}

TEST(FamilyRules, AcquisitionsAreCountedByPrimitive) {
  SafetyChecker checker;
  AttemptEvent attempt{"k", "c", AttemptResult::acquired, "", 1};
  checker.add(attempt);
  attempt.primitive = Primitive::permit;
  checker.add(attempt);
  checker.add(attempt);
  attempt.result = AttemptResult::conflict;
  checker.add(attempt);
  const SafetyReport r = checker.report();
  EXPECT_EQ(r.acquisitions, 3u);
  EXPECT_EQ(r.acquisitions_by_primitive.at("exclusive"), 1u);
  EXPECT_EQ(r.acquisitions_by_primitive.at("permit"), 2u);
}

TEST(ElectionRules, TwoLeadersAtOnceAreAViolation) {
  // The second leader won while the first one's validity still ran: its term is higher,
  // so only the overlap rule can see that the election had two leaders.
  const SafetyReport r = check({leadership("leader", "a", 1, 0, 1000, "w0.0"),
                                leadership("leader", "b", 2, 900, 1900, "w1.0")});
  EXPECT_EQ(r.violations, 1u);
  EXPECT_EQ(r.violations_by_primitive.at("election"), 1u);
  EXPECT_EQ(r.token_regressions, 0u);
  ASSERT_EQ(r.overlap_examples.size(), 1u);
  EXPECT_EQ(r.overlap_examples[0].first.value, "a");
  EXPECT_EQ(r.overlap_examples[0].second.value, "b");
  EXPECT_FALSE(r.safe());
}

TEST(ElectionRules, ATermNotAboveEveryEarlierLeadersIsARegression) {
  // Three leaders in turn, never overlapping: the third's term is above the second's but
  // not above the first's, which started before both.
  const SafetyReport r =
      check({leadership("leader", "a", 5, 0, 100), leadership("leader", "b", 3, 100, 200),
             leadership("leader", "c", 4, 200, 300), leadership("leader", "d", 5, 300, 400)});
  EXPECT_EQ(r.violations, 0u);
  EXPECT_EQ(r.token_regressions, 3u);
  ASSERT_FALSE(r.regression_examples.empty());
  EXPECT_EQ(r.regression_examples[0].earlier.value, "a");
  EXPECT_EQ(r.regression_examples[0].later.value, "b");
  EXPECT_FALSE(r.safe());
}

TEST(ElectionRules, ACleanHandoverHasNoFindings) {
  // A resignation hands over at the instant it ends; a crashed leader's successor starts
  // after its validity ran out; a lapsed term that never led (no validity left) still
  // takes part in the term order. Two elections on two keys never meet.
  const SafetyReport r = check(
      {leadership("leader", "a", 1, 0, 100, "w0.0"), leadership("leader", "b", 2, 100, 350, "w1.0"),
       leadership("leader", "c", 3, 360, 360, "w2.0"),
       leadership("leader", "d", 4, 900, 1000, "w0.1"),
       leadership("other", "e", 1, 0, 1000, "w2.1"), write("leader", 2, true, 110, 120),
       write("leader", 1, false, 130, 140, /*stale=*/true),
       AttemptEvent{"leader", "w0.0", AttemptResult::acquired, "", 0, Primitive::election}});
  EXPECT_TRUE(r.safe());
  EXPECT_EQ(r.violations, 0u);
  EXPECT_EQ(r.token_regressions, 0u);
  EXPECT_EQ(r.empty_holds, 1u);
  EXPECT_EQ(r.locks, 5u);
  EXPECT_EQ(r.acquisitions_by_primitive.at("election"), 1u);
}

TEST(ElectionRules, ALeadershipConflictsWithAnyOtherHoldOfItsKey) {
  // An election key is only ever campaigned on; any other hold there is a second owner.
  const SafetyReport r =
      check({leadership("leader", "a", 1, 0, 100), hold("leader", "x", 50, 60, 2)});
  EXPECT_EQ(r.violations, 1u);
}

TEST(EventJson, ElectionHoldsCarryTheirTerm) {
  const std::string line = to_json_line(leadership("leader", "a", 7, 1, 2));
  EXPECT_NE(line.find(R"("term":7)"), std::string::npos) << line;
  EXPECT_EQ(line.find("token"), std::string::npos) << line;
  EXPECT_NE(line.find(R"("primitive":"election")"), std::string::npos) << line;

  SafetyChecker checker;
  checker.add_line(
      R"({"type":"hold","key":"l","primitive":"election","term":3,"start_ns":0,"end_ns":10})");
  checker.add_line(
      R"({"type":"hold","key":"l","primitive":"election","term":2,"start_ns":10,"end_ns":20})");
  // No term, a token instead of the term, a term on another primitive.
  checker.add_line(R"({"type":"hold","key":"l","primitive":"election","start_ns":0,"end_ns":10})");
  checker.add_line(
      R"({"type":"hold","key":"l","primitive":"election","token":3,"start_ns":0,"end_ns":10})");
  checker.add_line(R"({"type":"hold","key":"k","term":3,"start_ns":0,"end_ns":10})");
  checker.add_line(
      R"({"type":"hold","key":"l","primitive":"election","term":-1,"start_ns":0,"end_ns":10})");
  const SafetyReport r = checker.report();
  EXPECT_EQ(r.holds, 2u);
  EXPECT_EQ(r.malformed_lines, 4u);
  EXPECT_EQ(r.token_regressions, 1u);
  EXPECT_EQ(to_json(r)["examples"]["token_regressions"][0]["later"]["term"], 2);
}

TEST(EventJson, RoundTripsEveryRecord) {
  const std::vector<Event> events = {
      hold("k", "v", 1, 2, 3, "p1"),
      hold("k", "v", -5, 2),
      permit("pool", "p", 3, 1, 2),
      reader("ledger", "r", 1, 2),
      writer("ledger", "w", 1, 2, 9),
      key_set({"a", "b"}, "s", 1, 2),
      leadership("leader", "l", 12, 1, 2),
      write("k", 4, true, 10, 20),
      write("k", 4, false, 10, 20, true),
      AttemptEvent{"k", "p", AttemptResult::conflict, "", 7},
      AttemptEvent{"k", "p", AttemptResult::error, "timeout", 8},
      AttemptEvent{"k", "p", AttemptResult::acquired, "", 9, Primitive::reader}};
  SafetyChecker direct, parsed;
  for (const Event& e : events) {
    const std::string line = to_json_line(e);
    const ParsedLine back = parse_event_line(line);
    ASSERT_TRUE(std::holds_alternative<Event>(back)) << line;
    EXPECT_EQ(to_json_line(std::get<Event>(back)), line);
    direct.add(e);
    parsed.add_line(line);
  }
  EXPECT_EQ(to_json(direct.report()), to_json(parsed.report()));
}

TEST(EventJson, MalformedAndForeignLinesAreCountedNotFatal) {
  SafetyChecker checker;
  checker.add_line(R"({"type":"hold","key":"k","client":"c","start_ns":0,"end_ns":10})");
  checker.add_line(
      R"({"type":"hold","key":"k","client":"c","start_ns":5,"end)");  // killed mid-line
  checker.add_line(R"({"type":"hold","key":"k","start_ns":"soon","end_ns":10})");
  checker.add_line(R"({"type":"write","key":"k","accepted":true,"at_ns":3})");  // no token
  checker.add_line(R"({"type":"attempt","result":"maybe"})");
  checker.add_line(R"([1,2,3])");
  checker.add_line(R"({"key":"k"})");
  checker.add_line(R"({"type":"fault","what":"partition node 2","at_ns":4})");
  checker.add_line("");
  checker.add_line(
      R"({"type":"write","key":"k","token":2,"accepted":false,"stale":true,"at_ns":3})");
  checker.add_line(R"({"type":"attempt","result":"error","code":7})");
  const SafetyReport r = checker.report();
  EXPECT_EQ(r.holds, 1u);
  EXPECT_EQ(r.malformed_lines, 6u);
  EXPECT_EQ(r.malformed_examples.size(), 6u);
  EXPECT_EQ(r.ignored_records, 1u);
  EXPECT_EQ(r.stale_writes_rejected, 1u);
  EXPECT_EQ(r.error_codes.at("7"), 1u);
}

TEST(EventJson, ExclusiveRecordsCarryNoFamilyFields) {
  // Lines of the exclusive lock read and write as they did before the family existed.
  const std::string line = to_json_line(hold("k", "v", 1, 2, 3));
  EXPECT_EQ(line.find("primitive"), std::string::npos) << line;
  const auto parsed = parse_event_line(
      R"({"type":"hold","key":"k","client":"c","value":"v","start_ns":1,"end_ns":2})");
  ASSERT_TRUE(std::holds_alternative<Event>(parsed));
  EXPECT_EQ(std::get<HoldEvent>(std::get<Event>(parsed)).primitive, Primitive::exclusive);
}

TEST(EventJson, FamilyRecordsNeedTheirFields) {
  SafetyChecker checker;
  checker.add_line(
      R"({"type":"hold","key":"p","primitive":"permit","permits":2,"start_ns":0,"end_ns":10})");
  checker.add_line(
      R"({"type":"hold","primitive":"multi","keys":["a","b"],"start_ns":0,"end_ns":10})");
  checker.add_line(R"({"type":"hold","key":"p","primitive":"permit","start_ns":0,"end_ns":10})");
  checker.add_line(
      R"({"type":"hold","key":"p","primitive":"permit","permits":0,"start_ns":0,"end_ns":10})");
  checker.add_line(R"({"type":"hold","key":"k","primitive":"fair","start_ns":0,"end_ns":10})");
  checker.add_line(R"({"type":"hold","key":"k","keys":["a"],"start_ns":0,"end_ns":10})");
  checker.add_line(R"({"type":"hold","primitive":"multi","keys":[],"start_ns":0,"end_ns":10})");
  checker.add_line(R"({"type":"hold","primitive":"multi","keys":[1],"start_ns":0,"end_ns":10})");
  checker.add_line(R"({"type":"attempt","result":"acquired","primitive":"latch"})");
  const SafetyReport r = checker.report();
  EXPECT_EQ(r.holds, 2u);
  EXPECT_EQ(r.locks, 3u);
  EXPECT_EQ(r.malformed_lines, 7u);
}

TEST(ReportJson, CarriesTheScenarioCounters) {
  const auto json = to_json(check({hold("k", "v1", 0, 100, 2), hold("k", "v2", 50, 150, 1),
                                   write("k", 7, true, 0, 10), write("k", 5, true, 20, 30)}));
  for (const char* name : {"acquisitions", "conflicts", "errors", "violations", "token_regressions",
                           "stale_writes_accepted", "stale_writes_rejected"}) {
    EXPECT_TRUE(json.contains(name)) << name;
  }
  EXPECT_EQ(json["violations"], 1);
  EXPECT_EQ(json["token_regressions"], 1);
  EXPECT_EQ(json["stale_writes_accepted"], 1);
  EXPECT_EQ(json["safe"], false);
  EXPECT_EQ(json["examples"]["violations"][0]["overlap_ns"], 50);
}

TEST(ReportJson, ShowsEachPrimitivesViolationsAndTheExcessPermits) {
  const auto json =
      to_json(check({permit("pool", "a", 1, 0, 100), permit("pool", "b", 1, 50, 150),
                     writer("ledger", "w", 0, 100, 1), reader("ledger", "r", 50, 150)}));
  EXPECT_EQ(json["violations"], 2);
  EXPECT_EQ(json["violations_by_primitive"]["permit"], 1);
  EXPECT_EQ(json["violations_by_primitive"]["reader"], 1);
  const auto& excess = json["examples"]["excess_permits"];
  ASSERT_EQ(excess.size(), 1u);
  EXPECT_EQ(excess[0]["key"], "pool");
  EXPECT_EQ(excess[0]["permits"], 1);
  EXPECT_EQ(excess[0]["admitted"]["value"], "b");
  EXPECT_EQ(excess[0]["holders"][0]["value"], "a");
  EXPECT_EQ(json["examples"]["violations"][0]["second"]["primitive"], "reader");
}

}  // namespace
}  // namespace redlock::chaos
