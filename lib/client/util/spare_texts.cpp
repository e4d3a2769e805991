#include "client/util/spare_texts.hpp"

#include <cstddef>

#include "client/util/spare_pool.hpp"

namespace redlock::detail {
namespace {

// Two per lock held at once; the bound follows the outcome lists' (outcome_pool.cpp).
constexpr std::size_t max_spare_texts = 2048;

// What a string holds without a heap block (libstdc++: 15 characters).
const std::size_t inline_capacity = std::string().capacity();

// Keys this long are rare: their blocks are freed rather than kept, so a burst of them
// cannot pin the pool's bound times their size.
constexpr std::size_t max_kept_capacity = 256;

SparePool<std::string>& spares() {
  // Never destroyed: a lock dropped during static destruction may still give back.
  static auto* const instance = new SparePool<std::string>(max_spare_texts);
  return *instance;
}

}  // namespace

std::string spare_text(std::string_view text) {
  std::string kept = text.size() > inline_capacity ? spares().take() : std::string();
  // assign() keeps the block when it is large enough, and makes a new one otherwise.
  kept.assign(text);
  return kept;
}

std::string spare_buffer(std::size_t size) {
  std::string kept = size > inline_capacity ? spares().take() : std::string();
  kept.resize(size);
  return kept;
}

void give_back_text(std::string&& text) noexcept {
  if (text.capacity() <= inline_capacity || text.capacity() > max_kept_capacity) return;
  text.clear();
  spares().give_back(std::move(text));
}

}  // namespace redlock::detail
