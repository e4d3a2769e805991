// parse_endpoint on arbitrary strings. Beyond "no crash", every result must keep the
// parser's promises:
//   - a refusal is errc::invalid_argument, worded `invalid node URL "<URL>": <why>`;
//   - an accepted URL has a usable address (host and a port in 1-65535, or an absolute
//     socket path that fits sockaddr_un);
//   - its `display` is safe to log: parsed again it gives the same endpoint, except
//     that the password (if any) reads "***". A display that leaked the password would
//     parse back to the password itself.

#include <sys/un.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "net/endpoint.hpp"

namespace {

using redlock::net::Endpoint;
using redlock::net::Scheme;

[[noreturn]] void fail(const char* what, std::string_view url, const std::string& detail) {
  std::fprintf(stderr, "fuzz_endpoint: %s\n  url: \"%.*s\"\n  %s\n", what,
               static_cast<int>(url.size()), url.data(), detail.c_str());
  std::abort();
}

void check_refusal(std::string_view url, const redlock::Error& error) {
  if (error != redlock::errc::invalid_argument)
    fail("refusal with another code", url, error.message());
  if (error.message().rfind("invalid node URL \"", 0) != 0) {
    fail("refusal does not name the URL", url, error.message());
  }
}

void check_address(std::string_view url, const Endpoint& endpoint) {
  if (endpoint.scheme == Scheme::unix_socket) {
    if (endpoint.path.empty() || endpoint.path.front() != '/')
      fail("relative socket path", url, endpoint.path);
    if (endpoint.path.size() >= sizeof(sockaddr_un::sun_path))
      fail("socket path too long", url, endpoint.path);
    return;
  }
  if (endpoint.host.empty()) fail("empty host", url, endpoint.display);
  if (endpoint.port == 0) fail("port 0", url, endpoint.display);
  if (endpoint.db < 0) fail("negative db", url, endpoint.display);
}

void check_display(std::string_view url, const Endpoint& endpoint) {
  auto again = redlock::net::parse_endpoint(endpoint.display);
  if (!again)
    fail("display does not parse", url, endpoint.display + ": " + again.error().message());
  const std::string expected_password = endpoint.password.empty() ? "" : "***";
  if (again->password != expected_password) {
    fail("display leaks or loses the password", url, "display: " + endpoint.display);
  }
  if (again->scheme != endpoint.scheme || again->host != endpoint.host ||
      again->port != endpoint.port || again->path != endpoint.path || again->db != endpoint.db ||
      again->username != endpoint.username) {
    fail("display names another endpoint", url, "display: " + endpoint.display);
  }
  if (again->display != endpoint.display) fail("display is not stable", url, again->display);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view url(reinterpret_cast<const char*>(data), size);
  auto endpoint = redlock::net::parse_endpoint(url);
  if (!endpoint) {
    check_refusal(url, endpoint.error());
    return 0;
  }
  check_address(url, *endpoint);
  check_display(url, *endpoint);
  return 0;
}
