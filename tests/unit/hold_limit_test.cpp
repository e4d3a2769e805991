// The cap on auto-extension (client/kinds/hold_limit.hpp) with a manual clock: which watchdog
// ticks may still extend a lock under LockOptions::max_hold and max_extensions.

#include "client/kinds/hold_limit.hpp"

#include <gtest/gtest.h>

#include <chrono>

namespace redlock::detail {
namespace {

using namespace std::chrono_literals;
using core::Clock;

const Clock::time_point acquired = Clock::time_point(100s);

TEST(HoldLimitTest, NoLimitNeverRefuses) {
  const auto limit = HoldLimit::of(LockOptions{}, acquired);
  EXPECT_FALSE(limit.refuses(acquired + 1000h, 30s));
}

TEST(HoldLimitTest, MaxHoldRefusesTheFirstExtensionThatWouldEndPastIt) {
  LockOptions options;
  options.max_hold = 1000ms;
  const auto limit = HoldLimit::of(options, acquired);
  EXPECT_FALSE(limit.refuses(acquired + 200ms, 600ms));  // would end at 800 ms
  EXPECT_FALSE(limit.refuses(acquired + 400ms, 600ms));  // would end at exactly 1000 ms
  const auto refused = limit.refuses(acquired + 401ms, 600ms);
  ASSERT_TRUE(refused);
  EXPECT_EQ(*refused, "max_hold reached");
}

TEST(HoldLimitTest, MaxExtensionsCountsDown) {
  LockOptions options;
  options.max_extensions = 2;
  auto limit = HoldLimit::of(options, acquired);
  EXPECT_EQ(limit.extensions_left, 2);
  EXPECT_FALSE(limit.refuses(acquired + 1h, 30s));
  limit.extensions_left = 0;  // what the watchdog leaves after two extensions
  const auto refused = limit.refuses(acquired + 1s, 30s);
  ASSERT_TRUE(refused);
  EXPECT_EQ(*refused, "max_extensions reached");
}

TEST(HoldLimitTest, ErrorCarriesItsOwnCodeAndTheValidityLeft) {
  const auto error = hold_limit_error("k", "max_hold reached", acquired, acquired + 250ms);
  EXPECT_EQ(error, errc::hold_limit_reached);
  EXPECT_EQ(error.message(),
            "lock \"k\" no longer extended: max_hold reached (250 ms of validity left)");
}

}  // namespace
}  // namespace redlock::detail
