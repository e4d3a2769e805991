#pragma once
// Copies of a few texts kept in one buffer that only grows: a node keeps the key of an
// acquire (for the PTTL or TYPE a refusal may need) and the keys and arguments of a
// release (for a re-send) in the slot of each call in flight, and the slots are reused. A
// vector of strings lost the capacity it had whenever the counts changed, and each string
// was assigned on its own: about two allocations and 1,500 instructions per lock cycle at
// 128 async chains. Here, once a slot has held its largest call, a copy is one memcpy per
// text.

#include <cstring>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::detail {

class SavedTexts {
 public:
  /// The texts of every part, in order, as one list (a release's keys, then its
  /// arguments): one pass over them, one growth check.
  void assign(std::initializer_list<std::span<const std::string_view>> parts) {
    std::size_t total = 0;
    std::size_t count = 0;
    for (const auto part : parts) {
      count += part.size();
      for (const auto text : part) total += text.size();
    }
    // Never shrunk: the size is the capacity in use, so a copy that fits writes no fill.
    if (buffer_.size() < total) buffer_.resize(total);
    ends_.resize(count);
    std::size_t end = 0;
    std::size_t n = 0;
    for (const auto part : parts) {
      for (const auto text : part) {
        if (!text.empty()) std::memcpy(buffer_.data() + end, text.data(), text.size());
        end += text.size();
        ends_[n++] = end;
      }
    }
  }

  void assign(std::span<const std::string_view> texts) { assign({texts}); }

  /// One text (an acquire's key), without the loops.
  void assign(std::string_view text) {
    if (buffer_.size() < text.size()) buffer_.resize(text.size());
    ends_.resize(1);
    if (!text.empty()) std::memcpy(buffer_.data(), text.data(), text.size());
    ends_[0] = text.size();
  }

  std::size_t size() const noexcept { return ends_.size(); }

  /// Valid until the next assign().
  std::string_view operator[](std::size_t n) const noexcept {
    const std::size_t begin = n == 0 ? 0 : ends_[n - 1];
    return {buffer_.data() + begin, ends_[n] - begin};
  }

  /// Copies of `count` texts from the `first`; of every text by default.
  std::vector<std::string> copies(std::size_t first = 0, std::size_t count = npos) const {
    const std::size_t end = count == npos ? size() : first + count;
    std::vector<std::string> out;
    out.reserve(end - first);
    for (std::size_t n = first; n < end; ++n) out.emplace_back((*this)[n]);
    return out;
  }

  static constexpr std::size_t npos = static_cast<std::size_t>(-1);

 private:
  std::string buffer_;
  std::vector<std::size_t> ends_;
};

}  // namespace redlock::detail
