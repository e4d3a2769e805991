// A Redis ACL user that may only touch lock:* keys and channels and run what the lock
// scripts need (the rule line of docs/security.md): everything the library does works,
// anything else is denied with an error that names what was denied and where.

#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

#include "lock_user_rule.hpp"
#include "scripts/lock_scripts.hpp"
#include "scripts/script.hpp"
#include "support/connection_harness.hpp"
#include "support/redis_server.hpp"

namespace redlock::security_test {
namespace {

using namespace redlock::test;  // the connection harness
using net::ConnectionOptions;
using test::RedisServer;
using test::RedisServerOptions;

RedisServerOptions with_lock_user(RedisServerOptions options = {}) {
  const auto rule = lock_user_arguments();
  options.extra_args.insert(options.extra_args.end(), rule.begin(), rule.end());
  return options;
}

std::string locker_url(const RedisServer& server,
                       const std::string& password = lock_user_password) {
  const std::string scheme = server.options().tls ? "rediss" : "redis";
  return scheme + "://" + lock_user + ":" + password +
         "@127.0.0.1:" + std::to_string(server.port());
}

std::string node(const RedisServer& server) {
  return "127.0.0.1:" + std::to_string(server.port());
}

Outcome run_script(TestLoop& loop, net::Connection& connection, const scripts::Script& script,
                   std::vector<std::string_view> keys, std::vector<std::string_view> args) {
  Outcome outcome;
  connection.eval(script, keys, args, 2s, record(outcome));
  EXPECT_TRUE(loop.run_until([&] { return outcome.done(); }));
  return outcome;
}

// Every lock script, in the order the library runs them, with what each must answer.
void expect_every_lock_script_works(TestLoop& loop, net::Connection& connection) {
  const Outcome acquire = run_script(loop, connection, scripts::acquire(),
                                     {"lock:x", "lock:x:fence"}, {"owner", "10000", "1"});
  ASSERT_TRUE(acquire.ok()) << acquire.detail;
  ASSERT_EQ(acquire.elements.size(), 2u);
  EXPECT_EQ(acquire.elements[0], "1");
  EXPECT_GT(std::stoll(acquire.elements[1]), 0) << "a fencing token from INCR";

  const Outcome fence =
      run_script(loop, connection, scripts::fence(), {"lock:x", "lock:x:fence"}, {"owner", "7"});
  ASSERT_TRUE(fence.ok()) << fence.detail;
  EXPECT_EQ(fence.integer, 1);

  const Outcome extend =
      run_script(loop, connection, scripts::extend(), {"lock:x"}, {"owner", "20000"});
  ASSERT_TRUE(extend.ok()) << extend.detail;
  EXPECT_EQ(extend.integer, 1);

  const Outcome inspect = run_script(loop, connection, scripts::inspect(), {"lock:x"}, {});
  ASSERT_TRUE(inspect.ok()) << inspect.detail;
  ASSERT_EQ(inspect.elements.size(), 2u);
  EXPECT_GT(std::stoll(inspect.elements[0]), 10000);
  EXPECT_EQ(inspect.elements[1], "owner");

  // A holder's release, announced to waiters (the PUBLISH needs its own ACL right).
  const Outcome release = run_script(loop, connection, scripts::release(), {"lock:x"}, {"owner"});
  ASSERT_TRUE(release.ok()) << release.detail;
  EXPECT_EQ(release.integer, 1);

  // A failed attempt's leftovers go without an announcement.
  const Outcome leftover = run_script(loop, connection, scripts::acquire(),
                                      {"lock:x", "lock:x:fence"}, {"leftover", "10000", "0"});
  ASSERT_TRUE(leftover.ok()) << leftover.detail;
  const Outcome quiet =
      run_script(loop, connection, scripts::quiet_release(), {"lock:x"}, {"leftover"});
  ASSERT_TRUE(quiet.ok()) << quiet.detail;
  EXPECT_EQ(quiet.integer, 1);
}

TEST(Acl, LockUserRunsEveryLockScript) {
  RedisServer server(with_lock_user());
  TestLoop loop;

  // Waiters subscribe to <key>:released; the release script publishes there, the quiet
  // release does not (a message "leftover" would come between the two "owner").
  std::vector<std::string> messages;
  auto subscriber = open(loop.get(), locker_url(server), [&](ConnectionOptions& options) {
    options.on_message = [&](const redisReply* message) {
      messages.emplace_back(message->element[2]->str, message->element[2]->len);
    };
  });
  const Outcome subscribed = run_command(loop, *subscriber, {"SUBSCRIBE", "lock:x:released"});
  ASSERT_TRUE(subscribed.ok()) << subscribed.detail;

  auto connection = open(loop.get(), locker_url(server));
  // A fresh server has no scripts: the first round goes through the EVAL fallback.
  expect_every_lock_script_works(loop, *connection);
  expect_every_lock_script_works(loop, *connection);
  EXPECT_TRUE(loop.run_until([&] { return messages.size() == 2; }));
  EXPECT_EQ(messages, (std::vector<std::string>{"owner", "owner"}));

  const Outcome unsubscribed = run_command(loop, *subscriber, {"UNSUBSCRIBE", "lock:x:released"});
  EXPECT_TRUE(unsubscribed.ok()) << unsubscribed.detail;
}

// INFO commandstats' count of `command` (e.g. "evalsha"), or 0 before its first call;
// `counter` "rejected_calls" counts those the ACL refused.
long long calls(RedisServer& server, const std::string& command,
                const std::string& counter = "calls") {
  const std::string info = server.command({"INFO", "commandstats"}).str;
  const auto line = info.find("cmdstat_" + command + ":");
  if (line == std::string::npos) return 0;
  const auto at = info.find(counter + "=", line);
  return at == std::string::npos ? 0 : std::stoll(info.substr(at + counter.size() + 1));
}

// The extend script as a client that could not compute SHA-1 holds it (Script::sha1).
const scripts::Script& undigested_extend() {
  static const scripts::Script script{"extend", scripts::extend().source, ""};
  return script;
}

// Where SHA-1 is unavailable the rule gains +script|load: the connection asks the digest
// once, and sends EVALSHA from then on.
TEST(Acl, LockUserWithScriptLoadTakesTheDigestFromTheServer) {
  RedisServerOptions options;
  const auto rule = user_arguments(lock_user, lock_user_password,
                                   joined(lock_rule(), digest_fallback_additions()));
  options.extra_args = rule;
  RedisServer server(options);
  TestLoop loop;
  auto connection = open(loop.get(), locker_url(server));
  for (int i = 0; i < 10; ++i) {
    const Outcome extend =
        run_script(loop, *connection, undigested_extend(), {"lock:x"}, {"owner", "10000"});
    ASSERT_TRUE(extend.ok()) << extend.detail;
  }
  EXPECT_EQ(calls(server, "script|load"), 1);
  EXPECT_EQ(calls(server, "eval"), 1);
  EXPECT_EQ(calls(server, "evalsha"), 9);
}

// Without +script|load the scripts still work, each call an EVAL: the documented rule
// needs nothing more where the client computes its digests.
TEST(Acl, LockUserWithoutScriptLoadSendsTheSourceEveryTime) {
  RedisServer server(with_lock_user());
  TestLoop loop;
  auto connection = open(loop.get(), locker_url(server));
  for (int i = 0; i < 10; ++i) {
    const Outcome extend =
        run_script(loop, *connection, undigested_extend(), {"lock:x"}, {"owner", "10000"});
    ASSERT_TRUE(extend.ok()) << extend.detail;
  }
  EXPECT_EQ(calls(server, "eval"), 10);
  EXPECT_EQ(calls(server, "evalsha"), 0);
  EXPECT_EQ(calls(server, "script|load", "rejected_calls"), 1)
      << "refused once, then not asked again";
}

TEST(Acl, ScriptOnAnotherKeyIsDeniedNamingTheScriptAndTheNode) {
  RedisServer server(with_lock_user());
  TestLoop loop;
  auto connection = open(loop.get(), locker_url(server));
  const Outcome denied = run_script(loop, *connection, scripts::acquire(),
                                    {"other:x", "other:x:fence"}, {"owner", "10000", "1"});
  EXPECT_EQ(denied.error, make_error_code(errc::redis_error)) << denied.detail;
  expect_contains(denied.detail,
                  "NOPERM this user has no permissions to access one of the keys used as "
                  "arguments (EVAL of the acquire script on " +
                      node(server) + ")");
  EXPECT_TRUE(server.command({"EXISTS", "other:x"}).integer == 0);

  // The connection survives a denial.
  const Outcome get = run_command(loop, *connection, {"GET", "lock:x"});
  EXPECT_TRUE(get.ok()) << get.detail;
}

TEST(Acl, DeniedCommandInsideAScriptNamesTheScriptAndTheNode) {
  RedisServer server(with_lock_user());
  TestLoop loop;
  auto connection = open(loop.get(), locker_url(server));
  // An unknown SHA-1 makes the connection send the source with EVAL, like a NOSCRIPT
  // after SCRIPT FLUSH; the body touches a key the user may not.
  const scripts::Script sneaky{"sneaky", "return redis.call('GET', 'other:y')",
                               std::string(40, '0')};
  const Outcome denied = run_script(loop, *connection, sneaky, {"lock:x"}, {});
  EXPECT_EQ(denied.error, make_error_code(errc::redis_error)) << denied.detail;
  expect_contains(denied.detail,
                  "The user executing the script can't access at least one of "
                  "the keys");
  expect_contains(denied.detail, "(EVAL of the sneaky script on " + node(server) + ")");
}

TEST(Acl, DeniedCommandIsNamedWithTheNode) {
  RedisServer server(with_lock_user());
  TestLoop loop;
  auto connection = open(loop.get(), locker_url(server));
  const Outcome denied = run_command(loop, *connection, {"FLUSHALL"});
  EXPECT_EQ(denied.error, make_error_code(errc::redis_error)) << denied.detail;
  EXPECT_EQ(denied.detail,
            "NOPERM this user has no permissions to run the 'flushall' command "
            "(FLUSHALL on " +
                node(server) + ")");
}

TEST(Acl, OtherErrorRepliesStayVerbatim) {
  RedisServer server(with_lock_user());
  TestLoop loop;
  auto connection = open(loop.get(), locker_url(server));
  const Outcome wrong = run_command(loop, *connection, {"INCR", "lock:not-a-number-yet"});
  ASSERT_TRUE(wrong.ok()) << wrong.detail;
  ASSERT_TRUE(run_command(loop, *connection, {"SET", "lock:text", "abc"}).ok());
  const Outcome error = run_command(loop, *connection, {"INCR", "lock:text"});
  EXPECT_EQ(error.error, make_error_code(errc::redis_error));
  EXPECT_EQ(error.detail, "ERR value is not an integer or out of range");
}

TEST(Acl, WrongPasswordIsAnAuthErrorWithRedisText) {
  RedisServer server(with_lock_user());
  TestLoop loop;
  auto connection = open(loop.get(), locker_url(server, "not-the-secret"));
  const Outcome outcome = run_command(loop, *connection, {"GET", "lock:x"});
  EXPECT_EQ(outcome.error, make_error_code(errc::auth_error)) << outcome.detail;
  expect_contains(outcome.detail,
                  "AUTH on " + node(server) + " failed: WRONGPASS invalid username-password pair");
}

TEST(Acl, LockUserOverTls) {
  RedisServerOptions options;
  options.tls = true;
  RedisServer server(with_lock_user(options));
  TestLoop loop;
  auto connection = open(loop.get(), locker_url(server), [](ConnectionOptions& tls) {
    const auto& files = test::test_certificates();
    tls.tls.ca_file = files.ca_cert;
    tls.tls.cert_file = files.client_cert;
    tls.tls.key_file = files.client_key;
  });
  expect_every_lock_script_works(loop, *connection);
  const Outcome denied = run_command(loop, *connection, {"GET", "other:x"});
  EXPECT_EQ(denied.error, make_error_code(errc::redis_error));
  expect_contains(denied.detail, "(GET on " + node(server) + ")");
}

}  // namespace
}  // namespace redlock::security_test
