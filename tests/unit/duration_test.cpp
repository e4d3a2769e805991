// The one duration parser of the command lines (tools/common/duration.hpp), in each of
// the syntaxes its programs use: the CLI's (a unit on every number), the chaos tools'
// (a bare number is milliseconds) and the demo's (microseconds too).

#include "tools/common/duration.hpp"

#include <gtest/gtest.h>

#include <chrono>

namespace redlock::tools {
namespace {

using namespace std::chrono_literals;

TEST(Duration, UnitsAndSums) {
  EXPECT_EQ(parse_duration("250ms").value, 250ms);
  EXPECT_EQ(parse_duration("10s").value, 10s);
  EXPECT_EQ(parse_duration("2m").value, 2min);
  EXPECT_EQ(parse_duration("1h").value, 1h);
  EXPECT_EQ(parse_duration("1m30s").value, 90s);
  EXPECT_EQ(parse_duration("0s").value, 0s);
}

TEST(Duration, TheCliRefusesABareNumberAndSaysWhichUnits) {
  const ParsedDuration bare = parse_duration("30");
  EXPECT_FALSE(bare);
  EXPECT_EQ(bare.error, "a duration needs a unit: ms, s, m or h (e.g. 30s)");
  EXPECT_EQ(parse_duration("5us").error, "unknown unit \"us\" (use ms, s, m or h)");
  EXPECT_EQ(parse_duration("").error, "empty duration (write e.g. 250ms, 10s, 2m or 1h)");
  EXPECT_EQ(parse_duration("-5s").error, "not a duration (write e.g. 250ms, 10s, 2m or 1h)");
  EXPECT_EQ(parse_duration("99999999999999h").error, "duration too long");
}

TEST(Duration, TheChaosToolsReadABareNumberAsMilliseconds) {
  const DurationSyntax chaos{.bare_is_milliseconds = true};
  EXPECT_EQ(parse_duration("1500", chaos).value, 1500ms);
  EXPECT_EQ(parse_duration("2s", chaos).value, 2s);
  EXPECT_FALSE(parse_duration("2x", chaos));
}

TEST(Duration, TheDemoAcceptsMicroseconds) {
  const DurationSyntax demo{.microseconds = true};
  EXPECT_EQ(parse_duration("500us", demo).value, 500us);
  EXPECT_EQ(parse_duration("1ms500us", demo).value, 1500us);
  EXPECT_FALSE(parse_duration("500", demo));
}

}  // namespace
}  // namespace redlock::tools
