// The command encoder must write exactly the bytes hiredis' own formatter writes, for
// any arguments: hiredis is the reference, ours only avoids its sprintf and malloc.

#include "net/command_encoder.hpp"

#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::net {
namespace {

std::string hiredis_bytes(const std::vector<std::string>& argv) {
  std::vector<const char*> pointers;
  std::vector<std::size_t> lengths;
  for (const auto& argument : argv) {
    pointers.push_back(argument.data());
    lengths.push_back(argument.size());
  }
  char* formatted = nullptr;
  const int length = redisFormatCommandArgv(&formatted, static_cast<int>(argv.size()),
                                            pointers.data(), lengths.data());
  EXPECT_GT(length, 0);
  std::string bytes(formatted, static_cast<std::size_t>(length));
  redisFreeCommand(formatted);
  return bytes;
}

std::string our_bytes(const std::vector<std::string>& argv, std::string prefix = {}) {
  std::vector<std::string_view> views(argv.begin(), argv.end());
  append_command(prefix, views);
  return prefix;
}

TEST(CommandEncoder, MatchesHiredisOnAScriptCall) {
  const std::vector<std::string> argv{
      "EVALSHA",         "3f2bc1cbb0d2b2e8cbd6d6b1a7b7f3c2a49b6e01", "2",     "orders:42",
      "orders:42:fence", "9b0d6c1e4f2a83570c6de1f3a2b4c5d6",         "10000", "0"};
  EXPECT_EQ(our_bytes(argv), hiredis_bytes(argv));
  EXPECT_EQ(our_bytes({"PING"}), "*1\r\n$4\r\nPING\r\n");
}

TEST(CommandEncoder, EmptyBinaryAndLongArguments) {
  const std::vector<std::string> argv{"SET",
                                      "",
                                      std::string("a\0b\r\n", 5),
                                      std::string(100'000, 'x'),
                                      std::string(9, 'y'),
                                      std::string(10, 'z')};
  EXPECT_EQ(our_bytes(argv), hiredis_bytes(argv));
}

TEST(CommandEncoder, AppendsAfterWhatTheBufferHolds) {
  const std::vector<std::string> argv{"GET", "k"};
  EXPECT_EQ(our_bytes(argv, "queued"), "queued" + hiredis_bytes(argv));
}

TEST(CommandEncoder, RandomCommandsMatchHiredis) {
  std::mt19937 random(20261123);
  for (int round = 0; round < 2000; ++round) {
    std::vector<std::string> argv(1 + random() % 12);
    for (auto& argument : argv) {
      // Lengths around the decimal digit boundaries, where a length header changes size.
      static constexpr std::size_t sizes[] = {0, 1, 9, 10, 11, 99, 100, 101, 999, 1000, 12345};
      argument.resize(sizes[random() % std::size(sizes)]);
      for (auto& byte : argument) byte = static_cast<char>(random() & 0xff);
    }
    ASSERT_EQ(our_bytes(argv), hiredis_bytes(argv)) << "round " << round;
  }
}

TEST(CommandEncoder, ACommandInPartsIsTheCommandWhole) {
  std::mt19937 random(20261124);
  for (int round = 0; round < 500; ++round) {
    std::vector<std::string> argv(1 + random() % 12);
    for (auto& argument : argv)
      argument.assign(random() % 120, static_cast<char>('a' + round % 26));
    const std::vector<std::string_view> views(argv.begin(), argv.end());
    // Cut anywhere, empty parts included.
    const std::size_t first_cut = random() % (views.size() + 1);
    const std::size_t second_cut = first_cut + random() % (views.size() - first_cut + 1);
    const std::span<const std::string_view> all(views);
    std::string parts = "queued";
    append_command(parts, {all.first(first_cut), all.subspan(first_cut, second_cut - first_cut),
                           all.subspan(second_cut)});
    ASSERT_EQ(parts, "queued" + hiredis_bytes(argv)) << "round " << round;
  }
}

TEST(CommandEncoder, SizesAreWhatIsWritten) {
  for (std::size_t size : {0, 1, 9, 10, 99, 100, 12345}) {
    const std::string argument(size, 'x');
    std::string bulk;
    append_bulk(bulk, argument);
    EXPECT_EQ(bulk_size(argument), bulk.size());
    EXPECT_EQ(bulk, "$" + std::to_string(size) + "\r\n" + argument + "\r\n");
    std::string header;
    append_array_header(header, size);
    EXPECT_EQ(array_header_size(size), header.size());
    EXPECT_EQ(header, "*" + std::to_string(size) + "\r\n");
  }
}

}  // namespace
}  // namespace redlock::net
