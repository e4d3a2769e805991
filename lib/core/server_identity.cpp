#include "core/server_identity.hpp"

#include <charconv>
#include <system_error>

namespace redlock::core {

namespace {

std::optional<std::string_view> field(std::string_view info, std::string_view name) {
  std::size_t at = 0;
  while (at < info.size()) {
    auto end = info.find('\n', at);
    if (end == std::string_view::npos) end = info.size();
    auto line = info.substr(at, end - at);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.size() > name.size() && line.substr(0, name.size()) == name &&
        line[name.size()] == ':') {
      return line.substr(name.size() + 1);
    }
    at = end + 1;
  }
  return std::nullopt;
}

}  // namespace

std::optional<ServerIdentity> parse_server_identity(std::string_view info) {
  const auto run_id = field(info, "run_id");
  const auto uptime = field(info, "uptime_in_seconds");
  if (!run_id || !uptime) return std::nullopt;
  long long seconds = 0;
  const auto [end, ec] = std::from_chars(uptime->data(), uptime->data() + uptime->size(), seconds);
  if (ec != std::errc() || end != uptime->data() + uptime->size() || seconds < 0) {
    return std::nullopt;
  }
  ServerIdentity identity;
  identity.run_id = std::string(*run_id);
  identity.uptime = std::chrono::seconds(seconds);
  identity.master_replid = std::string(field(info, "master_replid").value_or(""));
  identity.master_replid2 = std::string(field(info, "master_replid2").value_or(""));
  return identity;
}

}  // namespace redlock::core
