#include "net/cluster_map.hpp"

#include <hiredis/hiredis.h>

#include <charconv>

#include "net/cluster_slot.hpp"

namespace redlock::net {

namespace {

std::optional<std::string_view> text_of(const redisReply* reply) {
  if (reply == nullptr) return std::nullopt;
  if (reply->type != REDIS_REPLY_STRING && reply->type != REDIS_REPLY_STATUS) return std::nullopt;
  return std::string_view(reply->str, reply->len);
}

std::optional<long long> integer_of(const redisReply* reply) {
  if (reply == nullptr || reply->type != REDIS_REPLY_INTEGER) return std::nullopt;
  return reply->integer;
}

bool is_array(const redisReply* reply) {
  return reply != nullptr && reply->type == REDIS_REPLY_ARRAY;
}

// The value after `field` in a flat field/value array (RESP2's form of a map).
const redisReply* field(const redisReply* map, std::string_view name) {
  for (std::size_t i = 0; i + 1 < map->elements; i += 2) {
    if (text_of(map->element[i]) == name) return map->element[i + 1];
  }
  return nullptr;
}

std::optional<std::uint16_t> port_of(const redisReply* reply) {
  const auto value = integer_of(reply);
  if (!value || *value < 0 || *value > 65535) return std::nullopt;
  return static_cast<std::uint16_t>(*value);
}

std::optional<std::uint16_t> slot_of(const redisReply* reply) {
  const auto value = integer_of(reply);
  if (!value || *value < 0 || *value >= cluster_slot_count) return std::nullopt;
  return static_cast<std::uint16_t>(*value);
}

// A CLUSTER SHARDS node entry with role master; nullopt with `problem` when it has none.
std::optional<ShardMaster> shard_master(const redisReply* nodes, std::string& problem) {
  for (std::size_t i = 0; i < nodes->elements; ++i) {
    const redisReply* node = nodes->element[i];
    if (!is_array(node) || text_of(field(node, "role")) != "master") continue;
    ShardMaster master;
    const auto endpoint = text_of(field(node, "endpoint"));
    const auto ip = text_of(field(node, "ip"));
    const bool known = endpoint && !endpoint->empty() && *endpoint != "?";
    const auto tls_port = port_of(field(node, "tls-port"));
    // A server that serves TLS only (port 0) is named without a "port".
    const auto port = field(node, "port") != nullptr ? port_of(field(node, "port")) : tls_port;
    if ((!known && !ip) || !port) {
      problem = "a master without an address";
      return std::nullopt;
    }
    master.host = std::string(known ? *endpoint : *ip);
    master.port = *port;
    master.tls_port = tls_port.value_or(0);
    master.id = std::string(text_of(field(node, "id")).value_or(""));
    return master;
  }
  problem = "a shard with slots and no master";
  return std::nullopt;
}

}  // namespace

std::optional<SlotMap> SlotMap::from_shards(const redisReply* reply, std::string& problem) {
  auto map = empty_for(reply, "CLUSTER SHARDS", problem);
  if (!map) return std::nullopt;
  for (std::size_t s = 0; s < reply->elements; ++s) {
    const redisReply* shard = reply->element[s];
    const redisReply* slots = is_array(shard) ? field(shard, "slots") : nullptr;
    const redisReply* nodes = is_array(shard) ? field(shard, "nodes") : nullptr;
    if (!is_array(slots) || !is_array(nodes) || slots->elements % 2 != 0) {
      problem = "CLUSTER SHARDS: shard " + std::to_string(s) + " lacks slots or nodes";
      return std::nullopt;
    }
    auto master = shard_master(nodes, problem);
    if (!master) {
      if (slots->elements == 0) continue;  // a shard of replicas only serves nothing
      problem = "CLUSTER SHARDS: shard " + std::to_string(s) + ": " + problem;
      return std::nullopt;
    }
    const std::size_t index = map->index_of(*master);
    for (std::size_t i = 0; i < slots->elements; i += 2) {
      const auto first = slot_of(slots->element[i]);
      const auto last = slot_of(slots->element[i + 1]);
      if (!first || !last || *first > *last) {
        problem = "CLUSTER SHARDS: shard " + std::to_string(s) + ": a slot range out of 0-16383";
        return std::nullopt;
      }
      if (!map->claim(*first, *last, index, problem)) return std::nullopt;
    }
  }
  return map;
}

std::optional<SlotMap> SlotMap::from_slots(const redisReply* reply, std::string& problem) {
  auto map = empty_for(reply, "CLUSTER SLOTS", problem);
  if (!map) return std::nullopt;
  for (std::size_t r = 0; r < reply->elements; ++r) {
    const redisReply* range = reply->element[r];
    const std::string which = "CLUSTER SLOTS: range " + std::to_string(r);
    if (!is_array(range) || range->elements < 3 || !is_array(range->element[2]) ||
        range->element[2]->elements < 2) {
      problem = which + " lacks a master";
      return std::nullopt;
    }
    const auto first = slot_of(range->element[0]);
    const auto last = slot_of(range->element[1]);
    const redisReply* address = range->element[2];
    const auto host = text_of(address->element[0]);
    const auto port = port_of(address->element[1]);
    if (!first || !last || *first > *last || !host || !port) {
      problem = which + " does not read as [first, last, [host, port, ...], ...]";
      return std::nullopt;
    }
    ShardMaster master{std::string(*host), *port, 0, {}};
    if (address->elements > 2) master.id = std::string(text_of(address->element[2]).value_or(""));
    if (!map->claim(*first, *last, map->index_of(master), problem)) return std::nullopt;
  }
  return map;
}

std::optional<SlotMap> SlotMap::empty_for(const redisReply* reply, std::string_view command,
                                          std::string& problem) {
  if (!is_array(reply)) {
    problem = std::string(command) + ": not an array";
    return std::nullopt;
  }
  SlotMap map;
  map.owners_.assign(cluster_slot_count, -1);
  return map;
}

const ShardMaster* SlotMap::owner(std::uint16_t slot) const noexcept {
  const std::int32_t index = owner_index(slot);
  return index < 0 ? nullptr : &masters_[static_cast<std::size_t>(index)];
}

std::vector<ShardMaster> SlotMap::owners() const {
  std::vector<bool> owns(masters_.size(), false);
  for (const auto owner : owners_) {
    if (owner >= 0) owns[static_cast<std::size_t>(owner)] = true;
  }
  std::vector<ShardMaster> found;
  for (std::size_t i = 0; i < masters_.size(); ++i) {
    if (owns[i]) found.push_back(masters_[i]);
  }
  return found;
}

std::size_t SlotMap::uncovered() const noexcept {
  std::size_t count = 0;
  for (const auto owner : owners_) count += owner < 0 ? 1 : 0;
  return count;
}

void SlotMap::move(std::uint16_t slot, const ShardMaster& to) {
  if (owners_.empty()) owners_.assign(cluster_slot_count, -1);
  if (slot >= owners_.size()) return;
  owners_[slot] = static_cast<std::int32_t>(index_of(to));
}

std::size_t SlotMap::index_of(const ShardMaster& master) {
  // A redirection knows only the address: it names the master with that address.
  for (std::size_t i = 0; i < masters_.size(); ++i) {
    if (masters_[i].host == master.host && masters_[i].port == master.port) return i;
  }
  masters_.push_back(master);
  return masters_.size() - 1;
}

bool SlotMap::claim(std::uint16_t first, std::uint16_t last, std::size_t master,
                    std::string& problem) {
  for (std::uint32_t slot = first; slot <= last; ++slot) {
    if (owners_[slot] >= 0 && static_cast<std::size_t>(owners_[slot]) != master) {
      problem = "slot " + std::to_string(slot) + " is claimed by two masters";
      return false;
    }
    owners_[slot] = static_cast<std::int32_t>(master);
  }
  return true;
}

std::optional<Redirect> parse_redirect(std::string_view text) {
  Redirect redirect;
  if (text.starts_with("MOVED ")) {
    text.remove_prefix(6);
  } else if (text.starts_with("ASK ")) {
    redirect.kind = Redirect::Kind::ask;
    text.remove_prefix(4);
  } else {
    return std::nullopt;
  }
  const auto space = text.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  const std::string_view slot = text.substr(0, space);
  const std::string_view address = text.substr(space + 1);
  const auto colon = address.rfind(':');
  if (colon == std::string_view::npos) return std::nullopt;
  const std::string_view port = address.substr(colon + 1);
  unsigned slot_value = 0;
  unsigned port_value = 0;
  const auto slot_read = std::from_chars(slot.data(), slot.data() + slot.size(), slot_value);
  const auto port_read = std::from_chars(port.data(), port.data() + port.size(), port_value);
  if (slot_read.ec != std::errc() || slot_read.ptr != slot.data() + slot.size() ||
      port_read.ec != std::errc() || port_read.ptr != port.data() + port.size() ||
      slot_value >= cluster_slot_count || port_value == 0 || port_value > 65535 || slot.empty()) {
    return std::nullopt;
  }
  redirect.slot = static_cast<std::uint16_t>(slot_value);
  redirect.port = static_cast<std::uint16_t>(port_value);
  redirect.host = std::string(address.substr(0, colon));
  return redirect;
}

}  // namespace redlock::net
