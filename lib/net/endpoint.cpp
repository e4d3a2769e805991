#include "net/endpoint.hpp"

#include <sys/un.h>

#include <cctype>
#include <climits>
#include <optional>

#include "net/errors.hpp"

namespace redlock::net {
namespace {

constexpr std::string_view redis_prefix = "redis://";
constexpr std::string_view rediss_prefix = "rediss://";
constexpr std::string_view unix_prefix = "unix://";
constexpr std::string_view sentinel_prefix = "redis-sentinel://";
constexpr std::string_view sentinels_prefix = "rediss-sentinel://";
constexpr std::string_view cluster_prefix = "redis-cluster://";
constexpr std::string_view clusters_prefix = "rediss-cluster://";

bool starts_with_nocase(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(text[i])) != prefix[i]) return false;
  }
  return true;
}

// The credentials of a URL end at its last '@' (passwords may hold a raw '/' or '@');
// for unix URLs the path starts at the first "@/" instead, so a path may hold '@'.
std::size_t credentials_end(std::string_view rest, bool unix_socket) {
  if (unix_socket) {
    if (!rest.empty() && rest.front() == '/') return std::string_view::npos;
    return rest.find("@/");
  }
  return rest.rfind('@');
}

// The URL as it may be logged: everything between "user:" and '@' becomes "***".
// Credentials without ':' are masked whole, since the user may have meant a password.
std::string mask(std::string_view url) {
  std::size_t scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) {
    std::size_t at = url.rfind('@');
    if (at == std::string_view::npos) return std::string(url);
    return "***" + std::string(url.substr(at));
  }
  std::size_t start = scheme_end + 3;
  std::string_view rest = url.substr(start);
  bool unix_socket = starts_with_nocase(url, unix_prefix);
  std::size_t at = credentials_end(rest, unix_socket);
  // "unix://:pw@tmp/redis.sock" (path not absolute) is refused, and the refusal quotes
  // the URL: without a "@/" the credentials are taken to end at the last '@' instead.
  if (at == std::string_view::npos && unix_socket && !rest.empty() && rest.front() != '/') {
    at = rest.rfind('@');
  }
  if (at == std::string_view::npos) return std::string(url);
  std::string_view userinfo = rest.substr(0, at);
  std::size_t colon = userinfo.find(':');
  std::string masked(url.substr(0, start));
  if (colon == std::string_view::npos) {
    masked += "***";
  } else {
    masked += userinfo.substr(0, colon + 1);
    if (colon + 1 < userinfo.size()) masked += "***";
  }
  masked += rest.substr(at);
  return masked;
}

Error invalid(std::string_view url, const std::string& what) {
  return Error(make_error_code(errc::invalid_argument),
               "invalid node URL \"" + mask(url) + "\": " + what);
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::optional<std::string> percent_decode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    if (i + 2 >= text.size()) return std::nullopt;
    int high = hex_value(text[i + 1]);
    int low = hex_value(text[i + 2]);
    if (high < 0 || low < 0) return std::nullopt;
    out += static_cast<char>(high * 16 + low);
    i += 2;
  }
  return out;
}

// Digits only, no sign, no leading '+', within [0, max]. Empty means "not a number".
std::optional<long> parse_number(std::string_view text, long max) {
  if (text.empty() || text.size() > 10) return std::nullopt;
  long value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  if (value > max) return std::nullopt;
  return value;
}

bool valid_host_name(std::string_view host) {
  for (char c : host) {
    auto u = static_cast<unsigned char>(c);
    if (!(std::isalnum(u) || c == '-' || c == '.' || c == '_')) return false;
  }
  return true;
}

// A bracketed IPv6 literal, optionally with a zone ("fe80::1%25eth0" or "%eth0").
bool valid_ipv6_literal(std::string_view host) {
  std::size_t zone = host.find('%');
  std::string_view address = host.substr(0, zone);
  if (address.find(':') == std::string_view::npos) return false;
  for (char c : address) {
    if (!(std::isxdigit(static_cast<unsigned char>(c)) || c == ':' || c == '.')) return false;
  }
  if (zone != std::string_view::npos) {
    std::string_view name = host.substr(zone + 1);
    if (name.empty()) return false;
    for (char c : name) {
      auto u = static_cast<unsigned char>(c);
      if (!(std::isalnum(u) || c == '-' || c == '_' || c == '.' || c == '%')) return false;
    }
  }
  return true;
}

std::optional<Error> parse_credentials(std::string_view url, std::string_view userinfo,
                                       Endpoint& endpoint) {
  std::size_t colon = userinfo.find(':');
  if (colon == std::string_view::npos) {
    return invalid(url,
                   "credentials must be [user]:password (for a password alone write "
                   "\"redis://:password@host\")");
  }
  auto user = percent_decode(userinfo.substr(0, colon));
  auto password = percent_decode(userinfo.substr(colon + 1));
  if (!user || !password) {
    return invalid(url, "bad percent-escape in the credentials (use %XX with two hex digits)");
  }
  if (!user->empty() && password->empty()) {
    return invalid(url, "ACL user " + quoted(*user) + " given without a password");
  }
  endpoint.username = std::move(*user);
  endpoint.password = std::move(*password);
  return std::nullopt;
}

Result<Endpoint> parse_unix(std::string_view url, std::string_view rest, Endpoint endpoint) {
  std::size_t at = credentials_end(rest, true);
  if (at != std::string_view::npos) {
    if (auto error = parse_credentials(url, rest.substr(0, at), endpoint)) return *error;
    rest = rest.substr(at + 1);
  }
  std::size_t query = rest.find('?');
  std::string_view path = rest.substr(0, query);
  if (path.empty()) return invalid(url, "missing socket path (write unix:///path/to/redis.sock)");
  if (path.front() != '/') {
    return invalid(url, "socket path must be absolute (write unix:///path/to/redis.sock)");
  }
  if (path.find('#') != std::string_view::npos) {
    return invalid(url, "unexpected '#' in the socket path");
  }
  if (path.size() >= sizeof(sockaddr_un::sun_path)) {
    return invalid(url, "socket path longer than " +
                            std::to_string(sizeof(sockaddr_un::sun_path) - 1) + " bytes");
  }
  endpoint.path = std::string(path);
  if (query != std::string_view::npos) {
    std::string_view parameters = rest.substr(query + 1);
    while (!parameters.empty()) {
      std::size_t amp = parameters.find('&');
      std::string_view parameter = parameters.substr(0, amp);
      parameters = amp == std::string_view::npos ? std::string_view() : parameters.substr(amp + 1);
      if (parameter.substr(0, 3) != "db=") {
        return invalid(url, "unknown parameter " + quoted(parameter) + " (only db=N is supported)");
      }
      auto db = parse_number(parameter.substr(3), INT_MAX);
      if (!db)
        return invalid(url, "bad db " + quoted(parameter.substr(3)) + " (expected 0 or more)");
      endpoint.db = static_cast<int>(*db);
    }
  }
  return endpoint;
}

Result<Endpoint> parse_tcp(std::string_view url, std::string_view rest, Endpoint endpoint) {
  std::size_t at = credentials_end(rest, false);
  if (at != std::string_view::npos) {
    if (auto error = parse_credentials(url, rest.substr(0, at), endpoint)) return *error;
    rest = rest.substr(at + 1);
  }

  std::string_view host;
  if (!rest.empty() && rest.front() == '[') {
    std::size_t close = rest.find(']');
    if (close == std::string_view::npos) return invalid(url, "missing ']' after the IPv6 address");
    host = rest.substr(1, close - 1);
    if (!valid_ipv6_literal(host)) return invalid(url, "bad IPv6 address " + quoted(host));
    rest = rest.substr(close + 1);
  } else {
    std::size_t end = rest.find_first_of(":/?#");
    host = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end);
    if (!host.empty() && !valid_host_name(host)) {
      return invalid(url, "bad character in host " + quoted(host));
    }
  }
  if (host.empty()) return invalid(url, "missing host");
  // Zone ids arrive percent-encoded ("%25eth0"), as RFC 6874 requires.
  if (auto decoded = percent_decode(host)) {
    endpoint.host = std::move(*decoded);
  } else {
    endpoint.host = std::string(host);
  }

  if (!rest.empty() && rest.front() == ':') {
    std::size_t end = rest.find_first_of("/?#");
    std::string_view port = rest.substr(1, end == std::string_view::npos ? end : end - 1);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end);
    if (port.empty()) return invalid(url, "missing port after ':'");
    auto number = parse_number(port, 99'999'999);
    if (!number) return invalid(url, "bad port " + quoted(port) + " (expected a number)");
    if (*number < 1 || *number > 65535) {
      return invalid(url, "port " + std::string(port) + " out of range (1-65535)");
    }
    endpoint.port = static_cast<std::uint16_t>(*number);
  }

  if (!rest.empty() && rest.front() == '/') {
    std::size_t end = rest.find_first_of("/?#", 1);
    std::string_view db = rest.substr(1, end == std::string_view::npos ? end : end - 1);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end);
    if (!db.empty()) {
      auto number = parse_number(db, INT_MAX);
      if (!number) return invalid(url, "bad db " + quoted(db) + " (expected 0 or more)");
      endpoint.db = static_cast<int>(*number);
    }
  }
  if (!rest.empty()) return invalid(url, "unexpected " + quoted(rest) + " after the address");
  return endpoint;
}

// "h1:p1,h2:p2" (a sentinel list or a cluster's seeds): each address is read by
// parse_tcp, so hosts, IPv6 literals and ports follow the rules of a redis:// URL. `what`
// names an entry in errors ("sentinel", "seed").
std::optional<Error> parse_address_list(std::string_view url, std::string_view hosts,
                                        std::uint16_t default_port, std::string_view what,
                                        std::vector<SentinelAddress>& out) {
  if (hosts.empty()) return invalid(url, "missing " + std::string(what) + " address");
  while (true) {
    std::size_t comma = hosts.find(',');
    std::string_view one = hosts.substr(0, comma);
    if (one.empty()) return invalid(url, "empty " + std::string(what) + " address in the list");
    Endpoint address;
    address.port = default_port;
    auto parsed = parse_tcp(url, one, std::move(address));
    if (!parsed) return parsed.error();
    if (parsed->db != 0 || !parsed->password.empty() || !parsed->username.empty()) {
      return invalid(url, "unexpected " + quoted(one) + " in the " + std::string(what) + " list");
    }
    for (const auto& known : out) {
      if (known.host == parsed->host && known.port == parsed->port) {
        return invalid(url, std::string(what) + " " + quoted(one) + " listed twice");
      }
    }
    out.push_back({parsed->host, parsed->port});
    if (comma == std::string_view::npos) return std::nullopt;
    hosts = hosts.substr(comma + 1);
  }
}

// "h1:p1,h2:p2/name[/db]" after the credentials.
Result<Endpoint> parse_sentinel_group(std::string_view url, std::string_view rest,
                                      Endpoint endpoint) {
  std::size_t at = credentials_end(rest, false);
  if (at != std::string_view::npos) {
    if (auto error = parse_credentials(url, rest.substr(0, at), endpoint)) return *error;
    rest = rest.substr(at + 1);
  }
  std::size_t slash = rest.find('/');
  if (slash == std::string_view::npos) {
    return invalid(url, "missing master name (write redis-sentinel://host:26379,.../name)");
  }
  std::string_view path = rest.substr(slash + 1);
  if (auto error =
          parse_address_list(url, rest.substr(0, slash), 26379, "sentinel", endpoint.sentinels)) {
    return *error;
  }
  std::size_t db_slash = path.find('/');
  std::string_view name = path.substr(0, db_slash);
  if (name.empty()) {
    return invalid(url, "missing master name (write redis-sentinel://host:26379,.../name)");
  }
  if (name.find_first_of("?#") != std::string_view::npos) {
    return invalid(url, "bad character in master name " + quoted(name));
  }
  auto decoded = percent_decode(name);
  if (!decoded) return invalid(url, "bad percent-escape in master name " + quoted(name));
  endpoint.master_name = std::move(*decoded);
  if (db_slash != std::string_view::npos) {
    std::string_view db = path.substr(db_slash + 1);
    auto number = parse_number(db, INT_MAX);
    if (!number) return invalid(url, "bad db " + quoted(db) + " (expected 0 or more)");
    endpoint.db = static_cast<int>(*number);
  }
  return endpoint;
}

// "h1:p1,h2:p2" after the credentials: a cluster's seeds. A cluster has only db 0, so
// nothing may follow them.
Result<Endpoint> parse_cluster(std::string_view url, std::string_view rest, Endpoint endpoint) {
  std::size_t at = credentials_end(rest, false);
  if (at != std::string_view::npos) {
    if (auto error = parse_credentials(url, rest.substr(0, at), endpoint)) return *error;
    rest = rest.substr(at + 1);
  }
  // A '/' inside brackets is no path; none is valid there anyway, and parse_tcp says so.
  const std::size_t path = rest.find_first_of("/?#");
  if (path != std::string_view::npos && rest.substr(path) != "/") {
    return invalid(url, "unexpected " + quoted(rest.substr(path)) +
                            " after the seeds (a cluster has no db but 0, and no name)");
  }
  if (auto error =
          parse_address_list(url, rest.substr(0, path), 6379, "seed", endpoint.cluster_seeds)) {
    return *error;
  }
  return endpoint;
}

}  // namespace

Result<Endpoint> parse_endpoint(std::string_view url) {
  if (url.empty()) return invalid(url, "empty URL");
  for (char c : url) {
    if (std::isspace(static_cast<unsigned char>(c)) ||
        std::iscntrl(static_cast<unsigned char>(c))) {
      return invalid(url, "contains whitespace or control characters");
    }
  }
  Endpoint endpoint;
  endpoint.display = mask(url);
  if (starts_with_nocase(url, redis_prefix)) {
    endpoint.scheme = Scheme::redis;
    return parse_tcp(url, url.substr(redis_prefix.size()), std::move(endpoint));
  }
  if (starts_with_nocase(url, rediss_prefix)) {
    endpoint.scheme = Scheme::rediss;
    return parse_tcp(url, url.substr(rediss_prefix.size()), std::move(endpoint));
  }
  if (starts_with_nocase(url, sentinel_prefix)) {
    endpoint.scheme = Scheme::redis;
    return parse_sentinel_group(url, url.substr(sentinel_prefix.size()), std::move(endpoint));
  }
  if (starts_with_nocase(url, sentinels_prefix)) {
    endpoint.scheme = Scheme::rediss;
    return parse_sentinel_group(url, url.substr(sentinels_prefix.size()), std::move(endpoint));
  }
  if (starts_with_nocase(url, cluster_prefix)) {
    endpoint.scheme = Scheme::redis;
    return parse_cluster(url, url.substr(cluster_prefix.size()), std::move(endpoint));
  }
  if (starts_with_nocase(url, clusters_prefix)) {
    endpoint.scheme = Scheme::rediss;
    return parse_cluster(url, url.substr(clusters_prefix.size()), std::move(endpoint));
  }
  if (starts_with_nocase(url, unix_prefix)) {
    endpoint.scheme = Scheme::unix_socket;
    endpoint.port = 0;
    return parse_unix(url, url.substr(unix_prefix.size()), std::move(endpoint));
  }
  std::size_t scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) {
    return invalid(url,
                   "missing scheme (expected redis://, rediss://, unix://, redis-sentinel:// or "
                   "redis-cluster://)");
  }
  return invalid(url, "unknown scheme " + quoted(url.substr(0, scheme_end)) +
                          " (expected redis, rediss, unix, redis-sentinel, rediss-sentinel, "
                          "redis-cluster or rediss-cluster)");
}

}  // namespace redlock::net
