// Planted violations: over a clean history of each primitive, the holds forged against any
// one of its holds must make the checker report a violation of that primitive's rule, and
// nothing else (no term or token regression that would hide which rule caught it).

#include "checker/planted_violation.hpp"

#include <gtest/gtest.h>

#include "checker/safety_checker.hpp"

namespace redlock::chaos {
namespace {

constexpr Primitive every_primitive[] = {Primitive::exclusive, Primitive::multi,
                                         Primitive::reader,    Primitive::writer,
                                         Primitive::permit,    Primitive::election};

// Holds that obey their rule, of one primitive on one key: back to back with rising
// tokens; readers overlapping each other, and K = 2 permits two at a time.
std::vector<HoldEvent> clean_history(Primitive primitive) {
  std::vector<HoldEvent> holds;
  const bool shared = primitive == Primitive::reader || primitive == Primitive::permit;
  for (int i = 0; i < 6; ++i) {
    HoldEvent h;
    h.key = "k";
    h.client = "c" + std::to_string(i);
    h.value = "v" + std::to_string(i);
    h.primitive = primitive;
    // Shared kinds overlap in pairs; the others touch without overlapping.
    h.start_ns = shared ? 1000 + (i / 2) * 1000 + (i % 2) * 10 : 1000 + i * 1000;
    h.end_ns = h.start_ns + 900;
    if (primitive != Primitive::reader && primitive != Primitive::permit) h.token = 10 + i;
    if (primitive == Primitive::permit) h.permits = 2;
    if (primitive == Primitive::multi) h.keys = {"k", "other"};
    holds.push_back(std::move(h));
  }
  return holds;
}

SafetyChecker checker_of(const std::vector<HoldEvent>& holds) {
  SafetyChecker checker;
  for (const HoldEvent& h : holds) checker.add(h);
  return checker;
}

TEST(PlantedViolation, EveryHoldOfEveryPrimitiveBecomesAViolationOfItsRule) {
  for (Primitive primitive : every_primitive) {
    const std::vector<HoldEvent> history = clean_history(primitive);
    const SafetyReport clean = checker_of(history).report();
    ASSERT_EQ(clean.violations, 0u) << name(primitive);
    ASSERT_EQ(clean.token_regressions, 0u) << name(primitive);
    for (std::size_t site = 0; site < history.size(); ++site) {
      SafetyChecker planted = checker_of(history);
      const std::vector<HoldEvent> forged = planted_against(history[site]);
      ASSERT_FALSE(forged.empty()) << name(primitive);
      for (const HoldEvent& h : forged) planted.add(h);
      const SafetyReport report = planted.report();
      SCOPED_TRACE(std::string(name(primitive)) + " at hold " + std::to_string(site));
      EXPECT_TRUE(report.violations_by_primitive.contains(std::string(name(primitive))));
      EXPECT_EQ(report.token_regressions, 0u);
    }
  }
}

TEST(PlantedViolation, APermitOfKNeedsKForgedHolders) {
  HoldEvent real = clean_history(Primitive::permit).front();
  real.permits = 3;
  EXPECT_EQ(planted_against(real).size(), 3u);
}

TEST(PlantedViolation, AHoldTooShortToOverlapIsNoSite) {
  HoldEvent real = clean_history(Primitive::exclusive).front();
  real.end_ns = real.start_ns + 1;
  EXPECT_TRUE(planted_against(real).empty());
  PlantSites sites;
  sites.offer(real);
  EXPECT_TRUE(sites.sites().empty());
  real.end_ns = real.start_ns + 500;
  sites.offer(real);
  EXPECT_EQ(sites.sites().size(), 1u);
}

}  // namespace
}  // namespace redlock::chaos
