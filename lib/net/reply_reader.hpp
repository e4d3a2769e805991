// A hiredis reader that a peer cannot make allocate without bound.
#pragma once

#include <array>
#include <cstddef>
#include <string>

struct redisReader;
struct redisReply;

namespace redlock::net {

/// Most array elements one reply may announce in all, nested arrays included. hiredis
/// allocates an array's slots when its "*<n>" header arrives, before any element, so a
/// peer that is not a sane Redis could make 12 bytes cost gigabytes. The replies the
/// library reads have at most a handful of elements; 65,536 slots are 512 KiB.
inline constexpr std::size_t max_reply_elements = std::size_t{1} << 16;

/// Reply objects freed by one connection, kept for its next replies. A lock command's
/// reply is one small object (nil, an integer, a short string) per node per command, and
/// taking each from malloc was a tenth of a lock cycle's allocations. The objects stay
/// single calloc'd blocks of hiredis' layout, so freeReplyObject frees them as well.
class ReplyCache {
 public:
  ReplyCache() = default;
  ReplyCache(const ReplyCache&) = delete;
  ReplyCache& operator=(const ReplyCache&) = delete;
  ~ReplyCache();

  /// A zeroed object; null when out of memory.
  redisReply* take() noexcept;
  /// Frees `reply` as freeReplyObject does, keeping its objects for take().
  void free(redisReply* reply) noexcept;

 private:
  std::array<redisReply*, 64> kept_{};
  std::size_t count_ = 0;
};

/// A reader that builds hiredis' own reply objects (free each with freeReplyObject, or
/// with `cache` when given, which must outlive the reader) and refuses, as a reader
/// error, a reply whose arrays exceed max_reply_elements.
/// Free it with free_reply_reader. Null when out of memory.
redisReader* create_reply_reader(ReplyCache* cache = nullptr);
void free_reply_reader(redisReader* reader) noexcept;

/// Why the reader's last error was a refusal of an oversized reply ("a reply announced
/// an array of N elements, ..."); empty when it was not.
std::string oversized_reply_error(const redisReader* reader);

}  // namespace redlock::net
