// Node URL parsing: what users type in Options::nodes and --nodes.

#include "net/endpoint.hpp"

#include <gtest/gtest.h>

#include <string>

namespace redlock::net {
namespace {

Endpoint parse_ok(std::string_view url) {
  auto result = parse_endpoint(url);
  EXPECT_TRUE(result) << url << ": " << (result ? "" : result.error().message());
  return result ? *result : Endpoint{};
}

// The message of a rejected URL; the test fails if it was accepted.
std::string parse_error(std::string_view url) {
  auto result = parse_endpoint(url);
  EXPECT_FALSE(result) << url << " was accepted";
  if (result) return {};
  EXPECT_EQ(result.error().code(), make_error_code(errc::invalid_argument));
  return result.error().message();
}

void expect_contains(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos) << "'" << part << "' not in: " << text;
}

TEST(Endpoint, HostAndPort) {
  Endpoint e = parse_ok("redis://127.0.0.1:7101");
  EXPECT_EQ(e.scheme, Scheme::redis);
  EXPECT_EQ(e.host, "127.0.0.1");
  EXPECT_EQ(e.port, 7101);
  EXPECT_EQ(e.db, 0);
  EXPECT_TRUE(e.username.empty());
  EXPECT_TRUE(e.password.empty());
  EXPECT_EQ(e.display, "redis://127.0.0.1:7101");
}

TEST(Endpoint, DefaultsAndTrailingSlash) {
  Endpoint e = parse_ok("redis://redis-1.example.com");
  EXPECT_EQ(e.host, "redis-1.example.com");
  EXPECT_EQ(e.port, 6379);
  EXPECT_EQ(parse_ok("redis://h:1/").db, 0);
  EXPECT_EQ(parse_ok("REDIS://h:1").host, "h");
}

TEST(Endpoint, Database) {
  EXPECT_EQ(parse_ok("redis://h:6380/3").db, 3);
  EXPECT_EQ(parse_ok("redis://h/15").db, 15);
  EXPECT_EQ(parse_ok("redis://h:1/0").port, 1);
}

TEST(Endpoint, PasswordOnlyIsMasked) {
  Endpoint e = parse_ok("redis://:s3cret@127.0.0.1:7101/2");
  EXPECT_TRUE(e.username.empty());
  EXPECT_EQ(e.password, "s3cret");
  EXPECT_EQ(e.db, 2);
  EXPECT_EQ(e.display, "redis://:***@127.0.0.1:7101/2");
}

TEST(Endpoint, AclUserAndPercentEscapes) {
  Endpoint e = parse_ok("redis://locker:p%40ss%2Fw%3Ard@h:7000");
  EXPECT_EQ(e.username, "locker");
  EXPECT_EQ(e.password, "p@ss/w:rd");
  EXPECT_EQ(e.display, "redis://locker:***@h:7000");
}

TEST(Endpoint, RawAtAndSlashInPassword) {
  Endpoint e = parse_ok("redis://:a@b/c@h:1/4");
  EXPECT_EQ(e.password, "a@b/c");
  EXPECT_EQ(e.host, "h");
  EXPECT_EQ(e.db, 4);
  EXPECT_EQ(e.display.find("a@b"), std::string::npos) << e.display;
}

TEST(Endpoint, Ipv6) {
  Endpoint e = parse_ok("redis://[::1]:7101/1");
  EXPECT_EQ(e.host, "::1");
  EXPECT_EQ(e.port, 7101);
  EXPECT_EQ(e.db, 1);
  EXPECT_EQ(parse_ok("redis://[fe80::1%25eth0]:1").host, "fe80::1%eth0");
  EXPECT_EQ(parse_ok("redis://[2001:db8::7]").port, 6379);
}

TEST(Endpoint, Tls) {
  Endpoint e = parse_ok("rediss://user:pw@cache.internal:6380");
  EXPECT_EQ(e.scheme, Scheme::rediss);
  EXPECT_EQ(e.host, "cache.internal");
  EXPECT_EQ(e.port, 6380);
  EXPECT_EQ(e.display, "rediss://user:***@cache.internal:6380");
}

TEST(Endpoint, UnixSocket) {
  Endpoint e = parse_ok("unix:///var/run/redis/redis.sock");
  EXPECT_EQ(e.scheme, Scheme::unix_socket);
  EXPECT_EQ(e.path, "/var/run/redis/redis.sock");
  EXPECT_TRUE(e.host.empty());
  EXPECT_EQ(e.db, 0);
  EXPECT_EQ(parse_ok("unix:///tmp/r.sock?db=5").db, 5);
  Endpoint with_password = parse_ok("unix://:pw@/tmp/r@1.sock");
  EXPECT_EQ(with_password.password, "pw");
  EXPECT_EQ(with_password.path, "/tmp/r@1.sock");
  EXPECT_EQ(with_password.display, "unix://:***@/tmp/r@1.sock");
}

TEST(Endpoint, EmptyPasswordMeansNoAuth) {
  Endpoint e = parse_ok("redis://:@h:1");
  EXPECT_TRUE(e.password.empty());
}

TEST(Endpoint, UnknownOrMissingScheme) {
  expect_contains(parse_error("http://h:1"), "unknown scheme 'http'");
  expect_contains(parse_error("127.0.0.1:6379"), "missing scheme");
  expect_contains(parse_error(""), "empty URL");
}

TEST(Endpoint, MissingHost) {
  expect_contains(parse_error("redis://"), "missing host");
  expect_contains(parse_error("redis://:6379"), "missing host");
  expect_contains(parse_error("redis://:pw@:6379"), "missing host");
  expect_contains(parse_error("redis://[]:1"), "bad IPv6 address");
}

TEST(Endpoint, BadPort) {
  std::string message = parse_error("redis://h:abc");
  expect_contains(message, "bad port 'abc'");
  expect_contains(message, "redis://h:abc");
  expect_contains(parse_error("redis://h:"), "missing port");
  expect_contains(parse_error("redis://h:-1"), "bad port");
  expect_contains(parse_error("redis://h:+5"), "bad port");
}

TEST(Endpoint, PortOutOfRange) {
  expect_contains(parse_error("redis://h:65536"), "port 65536 out of range (1-65535)");
  expect_contains(parse_error("redis://h:0"), "out of range");
  expect_contains(parse_error("redis://h:99999999999999999999"), "bad port");
}

TEST(Endpoint, BadDatabase) {
  expect_contains(parse_error("redis://h:1/x"), "bad db 'x'");
  expect_contains(parse_error("redis://h:1/-2"), "bad db");
  expect_contains(parse_error("redis://h:1/99999999999"), "bad db");
  expect_contains(parse_error("unix:///tmp/s.sock?db=a"), "bad db 'a'");
}

TEST(Endpoint, TrailingGarbage) {
  expect_contains(parse_error("redis://h:1/0/extra"), "unexpected '/extra'");
  expect_contains(parse_error("redis://h:1?db=2"), "unexpected '?db=2'");
  expect_contains(parse_error("redis://h:1#frag"), "unexpected '#frag'");
  expect_contains(parse_error("redis://[::1]x"), "unexpected 'x'");
  expect_contains(parse_error("redis://h:1 "), "whitespace");
  expect_contains(parse_error("redis://h!:1"), "bad character in host");
}

TEST(Endpoint, BadCredentials) {
  expect_contains(parse_error("redis://user@h:1"), "credentials must be [user]:password");
  expect_contains(parse_error("redis://:%zz@h:1"), "bad percent-escape");
  expect_contains(parse_error("redis://:%4@h:1"), "bad percent-escape");
  expect_contains(parse_error("redis://bob:@h:1"), "ACL user 'bob' given without a password");
}

TEST(Endpoint, BadUnixPaths) {
  expect_contains(parse_error("unix://"), "missing socket path");
  expect_contains(parse_error("unix://relative.sock"), "must be absolute");
  expect_contains(parse_error("unix:///tmp/s.sock?timeout=3"), "unknown parameter 'timeout=3'");
  expect_contains(parse_error("unix:///" + std::string(200, 'a')), "socket path longer than");
}

TEST(Endpoint, PasswordNeverInErrorMessages) {
  for (const char* url :
       {"redis://:hunter2@h:70000", "redis://admin:hunter2@:1", "redis://:hunter2@h:1/zz",
        "redis://admin:hunter2@h:1/0/x", "rediss://:hunter2@h:bad", "unix://:hunter2@/tmp/s?x=1",
        "ftp://:hunter2@h:1", "hunter2@h:1", "redis://hunter2@h:1"}) {
    std::string message = parse_error(url);
    EXPECT_EQ(message.find("hunter2"), std::string::npos) << message;
    expect_contains(message, "***");
  }
}

TEST(Endpoint, MessageNamesTheUrl) {
  std::string message = parse_error("redis://:pw@node-3:99999/1");
  expect_contains(message, "invalid node URL \"redis://:***@node-3:99999/1\"");
}

// --- Sentinel groups -------------------------------------------------------------------

TEST(Endpoint, SentinelGroup) {
  Endpoint e = parse_ok("redis-sentinel://10.0.0.1:26379,s2,[::1]:26380/mymaster");
  EXPECT_TRUE(e.is_sentinel_group());
  EXPECT_EQ(e.scheme, Scheme::redis);
  EXPECT_EQ(e.master_name, "mymaster");
  ASSERT_EQ(e.sentinels.size(), 3u);
  EXPECT_EQ(e.sentinels[0].host, "10.0.0.1");
  EXPECT_EQ(e.sentinels[0].port, 26379);
  EXPECT_EQ(e.sentinels[1].host, "s2");
  EXPECT_EQ(e.sentinels[1].port, 26379);  // the sentinel default, not 6379
  EXPECT_EQ(e.sentinels[2].host, "::1");
  EXPECT_EQ(e.sentinels[2].port, 26380);
  EXPECT_EQ(e.db, 0);
  EXPECT_TRUE(e.host.empty());  // the master is whatever the sentinels name
}

TEST(Endpoint, SentinelGroupCredentialsAndDbAreTheMasters) {
  Endpoint e = parse_ok("REDISS-SENTINEL://alice:p%40ss@s1:5000,s2:5001/orders%2Fmain/3");
  EXPECT_EQ(e.scheme, Scheme::rediss);
  EXPECT_EQ(e.username, "alice");
  EXPECT_EQ(e.password, "p@ss");
  EXPECT_EQ(e.master_name, "orders/main");
  EXPECT_EQ(e.db, 3);
  EXPECT_TRUE(e.sentinel_password.empty());  // set from Options, never from the URL
  EXPECT_EQ(e.display, "REDISS-SENTINEL://alice:***@s1:5000,s2:5001/orders%2Fmain/3");
}

TEST(Endpoint, StandaloneUrlsAreNoSentinelGroup) {
  EXPECT_FALSE(parse_ok("redis://127.0.0.1:7101/2").is_sentinel_group());
  EXPECT_FALSE(parse_ok("unix:///tmp/redis.sock").is_sentinel_group());
}

TEST(Endpoint, BadSentinelGroupsAreNamedWithTheCause) {
  const std::pair<const char*, const char*> rows[] = {
      {"redis-sentinel://s1:26379", "missing master name"},
      {"redis-sentinel://s1:26379/", "missing master name"},
      {"redis-sentinel:///mymaster", "missing sentinel address"},
      {"redis-sentinel://s1,,s2/m", "empty sentinel address in the list"},
      {"redis-sentinel://s1:0/m", "port 0 out of range (1-65535)"},
      {"redis-sentinel://s1:1,s1:1/m", "sentinel 's1:1' listed twice"},
      {"redis-sentinel://s1/m/x", "bad db 'x' (expected 0 or more)"},
      {"redis-sentinel://s1/m?db=1", "bad character in master name"},
  };
  for (const auto& [url, cause] : rows) expect_contains(parse_error(url), cause);
  const std::string masked = parse_error("redis-sentinel://:secret@s1/");
  expect_contains(masked, "invalid node URL \"redis-sentinel://:***@s1/\"");
  EXPECT_EQ(masked.find("secret"), std::string::npos);
}

// --- Redis Cluster --------------------------------------------------------------------

TEST(Endpoint, ClusterSeeds) {
  Endpoint e = parse_ok("redis-cluster://alice:p%40ss@10.0.0.1:7000,seed2,[::1]:7001");
  EXPECT_TRUE(e.is_cluster());
  EXPECT_FALSE(e.is_sentinel_group());
  EXPECT_EQ(e.scheme, Scheme::redis);
  EXPECT_EQ(e.username, "alice");
  EXPECT_EQ(e.password, "p@ss");
  ASSERT_EQ(e.cluster_seeds.size(), 3u);
  EXPECT_EQ(e.cluster_seeds[0].host, "10.0.0.1");
  EXPECT_EQ(e.cluster_seeds[0].port, 7000);
  EXPECT_EQ(e.cluster_seeds[1].port, 6379);  // Redis' default, not the sentinels'
  EXPECT_EQ(e.cluster_seeds[2].host, "::1");
  EXPECT_EQ(e.db, 0);
  EXPECT_TRUE(e.host.empty());  // each key's server is its slot's owner
  EXPECT_EQ(e.display, "redis-cluster://alice:***@10.0.0.1:7000,seed2,[::1]:7001");
  EXPECT_EQ(parse_ok("Rediss-Cluster://h:1/").scheme, Scheme::rediss);
  EXPECT_FALSE(parse_ok("redis://127.0.0.1:7101").is_cluster());
}

TEST(Endpoint, BadClustersAreNamedWithTheCause) {
  const std::pair<const char*, const char*> rows[] = {
      {"redis-cluster://", "missing seed address"},
      {"redis-cluster://s1,,s2", "empty seed address in the list"},
      {"redis-cluster://s1:1,s1:1", "seed 's1:1' listed twice"},
      {"redis-cluster://s1:70000", "port 70000 out of range (1-65535)"},
      {"redis-cluster://s1:7000/1", "unexpected '/1' after the seeds (a cluster has no db but 0"},
      {"redis-cluster://s1:7000?db=1", "unexpected '?db=1' after the seeds"},
      {"redis-cluster://s1,s2:x", "bad port 'x'"},
  };
  for (const auto& [url, cause] : rows) expect_contains(parse_error(url), cause);
  const std::string masked = parse_error("redis-cluster://:secret@s1,");
  expect_contains(masked, "invalid node URL \"redis-cluster://:***@s1,\"");
  EXPECT_EQ(masked.find("secret"), std::string::npos);
  expect_contains(parse_error("http://h:1"), "redis-cluster or rediss-cluster)");
}

}  // namespace
}  // namespace redlock::net
