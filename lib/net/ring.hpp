#pragma once
// The pipeline's queue: a FIFO whose slots are reused, so that an entry's buffers keep
// their capacity from one command to the next.

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

namespace redlock::net {

template <typename T>
class Ring {
 public:
  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  T& operator[](std::size_t i) noexcept { return slots_[(head_ + i) & (slots_.size() - 1)]; }
  const T& operator[](std::size_t i) const noexcept {
    return slots_[(head_ + i) & (slots_.size() - 1)];
  }
  T& front() noexcept { return slots_[head_]; }

  T& push_back() {
    if (size_ == slots_.size()) grow();
    T& slot = slots_[(head_ + size_) & (slots_.size() - 1)];
    ++size_;
    return slot;
  }

  /// A new entry at `position` (0 = front); the ones from there on move back by one.
  T& insert(std::size_t position) {
    push_back();
    for (std::size_t i = size_ - 1; i > position; --i) std::swap((*this)[i], (*this)[i - 1]);
    return (*this)[position];
  }

  void pop_front() noexcept {
    head_ = (head_ + 1) & (slots_.size() - 1);
    --size_;
  }

  /// Keeps the first `count` entries and drops the rest (their slots stay for reuse).
  void truncate(std::size_t count) noexcept { size_ = std::min(size_, count); }

 private:
  void grow() {
    std::vector<T> bigger(std::max<std::size_t>(16, slots_.size() * 2));
    for (std::size_t i = 0; i < size_; ++i) bigger[i] = std::move((*this)[i]);
    slots_.swap(bigger);
    head_ = 0;
  }

  std::vector<T> slots_;  // size is zero or a power of two
  std::size_t head_ = 0;
  std::size_t size_ = 0;
};

}  // namespace redlock::net
