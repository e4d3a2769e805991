// The copies a node keeps of a call's key, keys and arguments (member/saved_texts.hpp):
// every sequence of assignments of lists of every shape reads back what was assigned
// last, whatever the slot held before (more texts, fewer, longer, empty ones).

#include "member/saved_texts.hpp"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

namespace redlock::detail {
namespace {

std::vector<std::vector<std::string>> shapes() {
  const std::string long_text(40, 'x');
  return {{},
          {""},
          {"k"},
          {"a-key-of-16-char"},
          {long_text},
          {"k", "value-0123456789abcdef", "1"},
          {"", "", ""},
          {long_text, "", "k", long_text + "y"},
          {"{tag}k", "{tag}k:fence"}};
}

void expect_reads(const SavedTexts& saved, const std::vector<std::string>& texts) {
  ASSERT_EQ(saved.size(), texts.size());
  for (std::size_t n = 0; n < texts.size(); ++n) EXPECT_EQ(saved[n], texts[n]) << "text " << n;
  EXPECT_EQ(saved.copies(), texts);
}

TEST(SavedTexts, EverySequenceOfThreeAssignmentsReadsBackTheLast) {
  const auto all = shapes();
  for (const auto& first : all) {
    for (const auto& second : all) {
      for (const auto& third : all) {
        SavedTexts saved;
        for (const auto* texts : {&first, &second, &third}) {
          std::vector<std::string_view> views(texts->begin(), texts->end());
          saved.assign(views);
          expect_reads(saved, *texts);
        }
      }
    }
  }
}

TEST(SavedTexts, OneTextIsOneList) {
  SavedTexts saved;
  saved.assign(std::string_view("a-key-longer-than-fifteen"));
  expect_reads(saved, {"a-key-longer-than-fifteen"});
  saved.assign(std::string_view("k"));
  expect_reads(saved, {"k"});
}

// A release keeps its keys and its arguments as one list: every shape split at every
// point reads back whole, and each part's copies are that part alone.
TEST(SavedTexts, PartsReadBackAsOneListAndApart) {
  for (const auto& texts : shapes()) {
    for (std::size_t split = 0; split <= texts.size(); ++split) {
      const std::vector<std::string_view> views(texts.begin(), texts.end());
      const std::span<const std::string_view> all(views);
      SavedTexts saved;
      saved.assign({all.first(split), all.subspan(split)});
      expect_reads(saved, texts);
      EXPECT_EQ(saved.copies(0, split),
                std::vector<std::string>(texts.begin(), texts.begin() + split));
      EXPECT_EQ(saved.copies(split), std::vector<std::string>(texts.begin() + split, texts.end()));
    }
  }
}

// Texts taken from the saved copies themselves (a re-send keeps a release's own copies).
TEST(SavedTexts, CopiesOutliveTheTextsTheyWereMadeOf) {
  SavedTexts saved;
  {
    std::string key = "key-" + std::string(30, 'k');
    std::string value = "value-" + std::string(30, 'v');
    const std::vector<std::string_view> views{key, value};
    saved.assign(views);
    key.assign(key.size(), '?');
    value.assign(value.size(), '?');
  }
  expect_reads(saved, {"key-" + std::string(30, 'k'), "value-" + std::string(30, 'v')});
}

}  // namespace
}  // namespace redlock::detail
