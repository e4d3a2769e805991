#include "net/sentinel_resolution.hpp"

#include <hiredis/hiredis.h>

#include <array>
#include <charconv>
#include <utility>

namespace redlock::net {

namespace {

bool starts_with(std::string_view text, std::string_view prefix) noexcept {
  return text.substr(0, prefix.size()) == prefix;
}

// The words of a +switch-master payload: "<name> <old ip> <old port> <new ip> <new port>";
// nullopt for a payload of another shape.
std::optional<std::array<std::string_view, 5>> switch_words(std::string_view payload) {
  std::array<std::string_view, 5> words{};
  std::size_t count = 0;
  while (!payload.empty() && count < words.size()) {
    const std::size_t space = payload.find(' ');
    words[count++] = payload.substr(0, space);
    payload = space == std::string_view::npos ? std::string_view() : payload.substr(space + 1);
  }
  if (count != words.size() || !payload.empty()) return std::nullopt;
  return words;
}

}  // namespace

std::string describe_address(std::string_view host, std::uint16_t port) {
  std::string out;
  if (host.find(':') != std::string_view::npos) {
    out.append("[").append(host).append("]");
  } else {
    out.append(host);
  }
  return out + ":" + std::to_string(port);
}

SentinelResolution::SentinelResolution(Endpoint group) : group_(std::move(group)) {
  begin();
}

void SentinelResolution::begin() {
  // A round nobody has used yet is the round: the connection's first look-up must
  // start with the first sentinel listed, not the second.
  if (announced_) {
    auto [host, port] = std::move(*announced_);
    announced_.reset();
    unused_ = false;
    aim_at_master(std::move(host), port, naming_sentinel_ + " in +switch-master");
    return;
  }
  if (asking_ && unused_) return;
  unused_ = true;
  asking_ = true;
  asked_ = 0;
  failures_.clear();
  aim_at_sentinel();
}

void SentinelResolution::aim_at_sentinel() {
  current_ = next_ % group_.sentinels.size();
  next_ = current_ + 1;
  ++asked_;
  const SentinelAddress& sentinel = group_.sentinels[current_];
  target_ = Endpoint{};
  target_.scheme = group_.scheme;
  target_.host = sentinel.host;
  target_.port = sentinel.port;
  target_.username = group_.sentinel_username;
  target_.password = group_.sentinel_password;
  target_.master_name = group_.master_name;
  target_.display = describe_address(sentinel.host, sentinel.port);
  where_ = "sentinel " + target_.display + " (master " + quoted(group_.master_name) + ")";
}

bool SentinelResolution::sentinel_failed(const NetError& error) {
  unused_ = false;
  failures_.push_back(error.detail);
  if (asked_ >= group_.sentinels.size()) return false;
  aim_at_sentinel();
  return true;
}

void SentinelResolution::master_named(std::string host, std::uint16_t port) {
  unused_ = false;
  naming_sentinel_ = target_.display;
  naming_endpoint_ = target_;
  // The next round starts with the sentinel after this one; a round that fails because
  // this master is not one any more then hears another sentinel first.
  next_ = current_ + 1;
  aim_at_master(std::move(host), port, naming_sentinel_);
}

void SentinelResolution::aim_at_master(std::string host, std::uint16_t port,
                                       const std::string& named_by) {
  asking_ = false;
  target_ = group_;
  target_.sentinels.clear();
  target_.host = std::move(host);
  target_.port = port;
  target_.display = describe_address(target_.host, target_.port);
  where_ = "master " + quoted(group_.master_name) + " at " + target_.display +
           " (named by sentinel " + named_by + ")";
}

void SentinelResolution::follow_switch(std::string_view payload) {
  const auto words = switch_words(payload);
  if (!words) return;
  const std::string_view port_text = (*words)[4];
  unsigned port = 0;
  const auto [end, ec] =
      std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || end != port_text.data() + port_text.size() || port == 0 ||
      port > 65535) {
    return;
  }
  announced_.emplace(std::string((*words)[3]), static_cast<std::uint16_t>(port));
}

bool SentinelResolution::switch_moves_master(std::string_view payload) const {
  const auto words = switch_words(payload);
  if (!words || (*words)[0] != group_.master_name) return false;
  if (asking_) return true;
  return (*words)[3] != target_.host || (*words)[4] != std::to_string(target_.port);
}

NetError SentinelResolution::exhausted() const {
  std::string detail =
      "no sentinel of master " + quoted(group_.master_name) + " named a reachable master: ";
  for (std::size_t i = 0; i < failures_.size(); ++i) {
    if (i > 0) detail += "; ";
    detail += failures_[i];
  }
  return {make_error_code(errc::connection_error), std::move(detail)};
}

bool read_master_address(const redisReply* reply, std::string& host, std::uint16_t& port,
                         std::string& problem) {
  if (reply->type == REDIS_REPLY_NIL) {
    problem = "does not monitor this master name";
    return false;
  }
  if (reply->type == REDIS_REPLY_ERROR) {
    problem = "answered " + std::string(reply->str, reply->len);
    return false;
  }
  if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 2 ||
      reply->element[0]->type != REDIS_REPLY_STRING ||
      reply->element[1]->type != REDIS_REPLY_STRING) {
    problem = "answered a reply that is not [host, port]";
    return false;
  }
  std::string_view port_text(reply->element[1]->str, reply->element[1]->len);
  long value = 0;
  bool digits = !port_text.empty() && port_text.size() <= 5;
  for (char c : port_text) {
    if (c < '0' || c > '9') digits = false;
    value = value * 10 + (c - '0');
  }
  if (!digits || value < 1 || value > 65535 || reply->element[0]->len == 0) {
    problem = "named a bad address " +
              quoted(std::string(reply->element[0]->str, reply->element[0]->len)) + ":" +
              quoted(port_text);
    return false;
  }
  host.assign(reply->element[0]->str, reply->element[0]->len);
  port = static_cast<std::uint16_t>(value);
  return true;
}

bool read_role_is_master(const redisReply* reply, std::string& role) {
  if (reply->type == REDIS_REPLY_ERROR) {
    role = "an error: " + std::string(reply->str, reply->len);
    return false;
  }
  if (reply->type != REDIS_REPLY_ARRAY || reply->elements == 0 ||
      (reply->element[0]->type != REDIS_REPLY_STRING &&
       reply->element[0]->type != REDIS_REPLY_STATUS)) {
    role = "a reply that is not a role";
    return false;
  }
  role.assign(reply->element[0]->str, reply->element[0]->len);
  return role == "master";
}

namespace {

std::optional<long long> field_number(const redisReply* value) {
  if (value->type == REDIS_REPLY_INTEGER) return value->integer;
  if (value->type != REDIS_REPLY_STRING && value->type != REDIS_REPLY_STATUS) return std::nullopt;
  long long number = 0;
  const char* end = value->str + value->len;
  const auto [stop, error] = std::from_chars(value->str, end, number);
  if (error != std::errc() || stop != end) return std::nullopt;
  return number;
}

}  // namespace

std::optional<std::chrono::milliseconds> read_role_reported_time(const redisReply* reply,
                                                                 std::string_view host,
                                                                 std::uint16_t port) {
  if (reply->type != REDIS_REPLY_ARRAY) return std::nullopt;
  std::optional<std::string_view> ip;
  std::optional<long long> record_port;
  std::optional<long long> age;
  for (std::size_t i = 0; i + 1 < reply->elements; i += 2) {
    const redisReply* name = reply->element[i];
    const redisReply* value = reply->element[i + 1];
    if (name->type != REDIS_REPLY_STRING && name->type != REDIS_REPLY_STATUS) continue;
    const std::string_view field(name->str, name->len);
    if (field == "ip" && (value->type == REDIS_REPLY_STRING || value->type == REDIS_REPLY_STATUS)) {
      ip = std::string_view(value->str, value->len);
    } else if (field == "port") {
      record_port = field_number(value);
    } else if (field == "role-reported-time") {
      age = field_number(value);
    }
  }
  if (!ip || !record_port || !age || *age < 0) return std::nullopt;
  if (*ip != host || *record_port != port) return std::chrono::milliseconds(0);
  return std::chrono::milliseconds(*age);
}

bool is_not_master_error(std::string_view text) noexcept {
  return starts_with(text, "READONLY") || starts_with(text, "MASTERDOWN");
}

}  // namespace redlock::net
