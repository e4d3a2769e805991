#include "cycle_batch.hpp"

#include <algorithm>
#include <random>

namespace redlock_limit {

namespace {

// 16 hex digits of `number` at `at`.
void write_hex(char* at, std::uint64_t number) {
  static constexpr char digits[] = "0123456789abcdef";
  for (int i = 15; i >= 0; --i) {
    at[i] = digits[number & 0xf];
    number >>= 4;
  }
}

std::uint64_t draw_random() {
  std::random_device device;
  return (std::uint64_t(device()) << 32) | device();
}

}  // namespace

std::size_t append_command(std::string& out, std::initializer_list<std::string_view> arguments,
                           std::size_t marked) {
  out += '*';
  out += std::to_string(arguments.size());
  out += "\r\n";
  std::size_t marked_at = 0;
  std::size_t index = 0;
  for (auto argument : arguments) {
    out += '$';
    out += std::to_string(argument.size());
    out += "\r\n";
    if (index++ == marked) marked_at = out.size();
    out += argument;
    out += "\r\n";
  }
  return marked_at;
}

CycleBatch::CycleBatch(const std::string& key_prefix, int size, std::chrono::milliseconds ttl,
                       std::string_view release_sha)
    : size_(size), process_random_(draw_random()) {
  const std::string placeholder(value_length, '0');
  const std::string ttl_text = std::to_string(ttl.count());
  for (int i = 0; i < size; ++i) {
    keys_.push_back(key_prefix + std::to_string(i));
    acquire_values_.push_back(
        append_command(acquires_, {"SET", keys_.back(), placeholder, "NX", "PX", ttl_text}, 2));
    release_values_.push_back(
        append_command(releases_, {"EVALSHA", release_sha, "1", keys_.back(), placeholder}, 4));
  }
  for (int i = 0; i < size; ++i) {
    write_hex(acquires_.data() + acquire_values_[i], process_random_);
    write_hex(releases_.data() + release_values_[i], process_random_);
  }
  renew_values();
}

void CycleBatch::renew_values() {
  // The random half never changes; only the counter behind it is rewritten.
  for (int i = 0; i < size_; ++i) {
    ++counter_;
    char* acquire = acquires_.data() + acquire_values_[i] + 16;
    write_hex(acquire, counter_);
    std::copy(acquire, acquire + 16, releases_.data() + release_values_[i] + 16);
  }
}

}  // namespace redlock_limit
