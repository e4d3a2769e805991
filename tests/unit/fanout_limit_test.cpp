// The parts of redlock-fanout-limit (bench/limit) that decide what it counts: the reply
// scanner that tells a grant from a refusal, and the batch whose values are rewritten in
// place between cycles. A limit that miscounted grants would pass a broken cycle for a
// fast one.

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "cycle_batch.hpp"
#include "reply_scanner.hpp"

namespace redlock_limit {
namespace {

TEST(ReplyScanner, TellsGrantsFromRefusalsAndErrors) {
  std::vector<Verdict> verdicts;
  const std::string bytes =
      "+OK\r\n$-1\r\n:1\r\n:0\r\n-NOSCRIPT No matching script\r\n$3\r\nabc\r\n";
  EXPECT_EQ(scan_replies(bytes, verdicts), bytes.size());
  EXPECT_EQ(verdicts, (std::vector<Verdict>{Verdict::granted, Verdict::refused, Verdict::granted,
                                            Verdict::refused, Verdict::error, Verdict::refused}));
}

TEST(ReplyScanner, LeavesAnIncompleteReplyForLater) {
  std::vector<Verdict> verdicts;
  EXPECT_EQ(scan_replies("+OK\r\n:1\r", verdicts), 5u);
  EXPECT_EQ(verdicts.size(), 1u);
  verdicts.clear();
  // A bulk whose body has not all arrived is not a reply yet.
  EXPECT_EQ(scan_replies("$5\r\nab", verdicts), 0u);
  EXPECT_TRUE(verdicts.empty());
}

TEST(ReplyScanner, RefusesRepliesNoCycleCommandGives) {
  std::vector<Verdict> verdicts;
  EXPECT_THROW(scan_replies("*2\r\n:1\r\n:1\r\n", verdicts), std::runtime_error);
  EXPECT_THROW(scan_replies("$x\r\n", verdicts), std::runtime_error);
}

std::vector<std::string> values_in(std::string_view commands, std::size_t value_index) {
  // Every command here is an array of bulks; take argument `value_index` of each.
  std::vector<std::string> values;
  std::size_t at = 0;
  while (at < commands.size()) {
    const auto header_end = commands.find("\r\n", at);
    const int count = std::stoi(std::string(commands.substr(at + 1, header_end - at - 1)));
    at = header_end + 2;
    for (int i = 0; i < count; ++i) {
      const auto length_end = commands.find("\r\n", at);
      const auto length = std::stoul(std::string(commands.substr(at + 1, length_end - at - 1)));
      const auto body = commands.substr(length_end + 2, length);
      if (static_cast<std::size_t>(i) == value_index) values.emplace_back(body);
      at = length_end + 2 + length + 2;
    }
  }
  return values;
}

TEST(CycleBatch, EveryCycleGetsAValueNoneUsedBefore) {
  CycleBatch batch("limit:test:", 3, std::chrono::milliseconds(10'000), std::string(40, 'f'));
  std::set<std::string> seen;
  for (int round = 0; round < 2; ++round) {
    const auto acquired = values_in(batch.acquires(), 2);
    const auto released = values_in(batch.releases(), 4);
    ASSERT_EQ(acquired.size(), 3u);
    // The release names the value its acquire set: it is owner-checked.
    EXPECT_EQ(acquired, released);
    for (const auto& value : acquired) EXPECT_TRUE(seen.insert(value).second) << value;
    batch.renew_values();
  }
  EXPECT_EQ(batch.keys(),
            (std::vector<std::string>{"limit:test:0", "limit:test:1", "limit:test:2"}));
  EXPECT_EQ(values_in(batch.acquires(), 5), (std::vector<std::string>(3, "10000")));
}

}  // namespace
}  // namespace redlock_limit
