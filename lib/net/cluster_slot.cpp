#include "net/cluster_slot.hpp"

#include <array>

namespace redlock::net {

namespace {

constexpr std::array<std::uint16_t, 256> make_crc16_table() {
  std::array<std::uint16_t, 256> table{};
  for (unsigned byte = 0; byte < 256; ++byte) {
    auto crc = static_cast<std::uint16_t>(byte << 8);
    for (int bit = 0; bit < 8; ++bit) {
      crc = static_cast<std::uint16_t>((crc & 0x8000) != 0 ? (crc << 1) ^ 0x1021 : crc << 1);
    }
    table[byte] = crc;
  }
  return table;
}

constexpr auto crc16_table = make_crc16_table();

// Two bytes at a time (slicing by two): the register after a byte of zeros, for each value
// of its high byte, so that a pair of bytes costs two independent look-ups.
constexpr std::array<std::uint16_t, 256> make_crc16_pair_table() {
  std::array<std::uint16_t, 256> table{};
  for (unsigned byte = 0; byte < 256; ++byte) {
    const std::uint16_t once = crc16_table[byte];
    table[byte] = static_cast<std::uint16_t>((once << 8) ^ crc16_table[once >> 8]);
  }
  return table;
}

constexpr auto crc16_pair_table = make_crc16_pair_table();

// The tag of `key`, or nullopt when the whole key is hashed.
std::optional<std::string_view> hash_tag(std::string_view key) noexcept {
  const auto open = key.find('{');
  if (open == std::string_view::npos) return std::nullopt;
  const auto close = key.find('}', open + 1);
  if (close == std::string_view::npos || close == open + 1) return std::nullopt;
  return key.substr(open + 1, close - open - 1);
}

}  // namespace

std::uint16_t crc16(std::string_view bytes) noexcept {
  std::uint16_t crc = 0;
  std::size_t at = 0;
  for (; at + 2 <= bytes.size(); at += 2) {
    const auto high = static_cast<std::uint8_t>((crc >> 8) ^ static_cast<std::uint8_t>(bytes[at]));
    const auto low = static_cast<std::uint8_t>(crc ^ static_cast<std::uint8_t>(bytes[at + 1]));
    crc = static_cast<std::uint16_t>(crc16_pair_table[high] ^ crc16_table[low]);
  }
  if (at < bytes.size()) {
    const auto index = static_cast<std::uint8_t>((crc >> 8) ^ static_cast<std::uint8_t>(bytes[at]));
    crc = static_cast<std::uint16_t>((crc << 8) ^ crc16_table[index]);
  }
  return crc;
}

std::string_view hashed_part(std::string_view key) noexcept {
  return hash_tag(key).value_or(key);
}

std::uint16_t key_slot(std::string_view key) noexcept {
  return static_cast<std::uint16_t>(crc16(hashed_part(key)) % cluster_slot_count);
}

bool has_slot_companion(std::string_view key) noexcept {
  // "{}" is no tag: an empty key has no companion in its slot. Wrapped in braces, a key
  // without a tag is its own tag only if no '}' of its own ends it early.
  return !key.empty() && (hash_tag(key) || key.find('}') == std::string_view::npos);
}

bool assign_slot_companion(std::string& name, std::string_view key, std::string_view suffix) {
  if (!has_slot_companion(key)) return false;
  name.reserve(key.size() + suffix.size() + 2);
  if (hash_tag(key)) {
    name.assign(key).append(suffix);
  } else {
    name.assign("{").append(key).append("}").append(suffix);
  }
  return true;
}

std::optional<std::string> slot_companion(std::string_view key, std::string_view suffix) {
  std::string name;
  if (!assign_slot_companion(name, key, suffix)) return std::nullopt;
  return name;
}

}  // namespace redlock::net
