// rediss:// at the connection level, against real redis-server processes serving TLS with
// certificates the fixture makes: verification, names, client certificates, wrong ports.

#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

#include "scripts/lock_scripts.hpp"
#include "support/connection_harness.hpp"
#include "support/fake_resp_server.hpp"
#include "support/redis_server.hpp"

namespace redlock::security_test {
namespace {

using namespace redlock::test;  // the connection harness
using net::ConnectionOptions;
using net::ConnectionState;
using test::RedisServer;
using test::RedisServerOptions;
using test::test_certificates;
using test::TlsClientAuth;

std::string node(std::uint16_t port) {
  return "127.0.0.1:" + std::to_string(port);
}

// Trusts the fixture's CA and presents its client certificate.
void verified(ConnectionOptions& options) {
  const auto& files = test_certificates();
  options.tls.ca_file = files.ca_cert;
  options.tls.cert_file = files.client_cert;
  options.tls.key_file = files.client_key;
}

RedisServerOptions tls_server(TlsClientAuth auth = TlsClientAuth::required) {
  RedisServerOptions options;
  options.tls = true;
  options.tls_client_auth = auth;
  return options;
}

// Sends PING and waits for its answer or failure; the connection must not hang.
Outcome ping(TestLoop& loop, net::Connection& connection, milliseconds timeout = 5s) {
  return run_command(loop, connection, {"PING"}, timeout);
}

TEST(Tls, VerifiedConnectionRoundTripsCommandsAndScripts) {
  RedisServer server(tls_server());
  ASSERT_EQ(server.url().rfind("rediss://", 0), 0u) << server.url();
  TestLoop loop;
  auto connection = open(loop.get(), server.url(), verified);

  const Outcome set = run_command(loop, *connection, {"SET", "lock:plain", "value"});
  EXPECT_TRUE(set.ok()) << set.detail;
  const Outcome get = run_command(loop, *connection, {"GET", "lock:plain"});
  EXPECT_EQ(get.str, "value");

  // The first EVALSHA misses (NOSCRIPT) and falls back to EVAL; the second one hits.
  ASSERT_TRUE(server.command({"SCRIPT", "FLUSH"}).is_status("OK"));
  const std::array<std::string_view, 2> keys{"lock:x", "lock:x:fence"};
  for (const std::string_view value : {"first", "second"}) {
    const std::array<std::string_view, 3> args{value, "10000", "1"};
    Outcome acquire;
    connection->eval(scripts::acquire(), keys, args, 2s, record(acquire));
    ASSERT_TRUE(loop.run_until([&] { return acquire.done(); }));
    ASSERT_TRUE(acquire.ok()) << acquire.detail;
    ASSERT_EQ(acquire.elements.size(), value == "first" ? 2u : 3u);
    EXPECT_EQ(acquire.elements[0], value == "first" ? "1" : "0");  // then held by "first"
  }
  EXPECT_EQ(server.command({"GET", "lock:x"}).str, "first");
  EXPECT_EQ(server.command({"GET", "lock:x:fence"}).str, "1");
  EXPECT_EQ(connection->state(), ConnectionState::ready);
  EXPECT_EQ(connection->stats().connects, 1u);
  EXPECT_EQ(connection->stats().disconnects, 0u);
}

TEST(Tls, HostNameIsVerifiedAndSentAsSni) {
  RedisServer server(tls_server());
  TestLoop loop;
  // "localhost" may resolve to ::1 first, where nothing listens: every address is tried,
  // and the certificate must be valid for the name, not for the address.
  auto by_name = open(loop.get(), "rediss://localhost:" + std::to_string(server.port()), verified);
  const Outcome named = ping(loop, *by_name);
  EXPECT_TRUE(named.ok()) << named.detail;
  EXPECT_EQ(named.str, "PONG");

  auto by_server_name = open(loop.get(), server.url(), [](ConnectionOptions& options) {
    verified(options);
    options.tls.server_name = "localhost";
  });
  const Outcome overridden = ping(loop, *by_server_name);
  EXPECT_TRUE(overridden.ok()) << overridden.detail;
}

TEST(Tls, WrongCaIsACertificateVerifyError) {
  RedisServer server(tls_server());
  TestLoop loop;
  auto connection = open(loop.get(), server.url(), [](ConnectionOptions& options) {
    verified(options);
    options.tls.ca_file = test_certificates().other_ca_cert;
  });
  const Outcome outcome = ping(loop, *connection);
  EXPECT_EQ(outcome.error, make_error_code(errc::tls_error)) << outcome.detail;
  // Redis sends its CA along with its certificate, so OpenSSL words it "self-signed
  // certificate in certificate chain"; without the CA it would be "unable to get local
  // issuer certificate". Either way: verification failed, and which node it was.
  expect_contains(outcome.detail, "TLS handshake with " + node(server.port()) +
                                      " failed: certificate verify failed (");
  EXPECT_EQ(connection->stats().connects, 0u);
}

TEST(Tls, SystemStoreDoesNotTrustATestCa) {
  RedisServer server(tls_server());
  TestLoop loop;
  // No CA given: the system's trusted CAs, which never signed the fixture's certificate.
  auto connection = open(loop.get(), server.url(), [](ConnectionOptions& options) {
    verified(options);
    options.tls.ca_file.clear();
    options.connect_timeout = 5s;  // verifying against the whole store is slow under TSan
  });
  const Outcome outcome = ping(loop, *connection);
  EXPECT_EQ(outcome.error, make_error_code(errc::tls_error)) << outcome.detail;
  expect_contains(outcome.detail, "certificate verify failed");
  expect_contains(outcome.detail, node(server.port()));
}

TEST(Tls, HostNameMismatchIsACertificateVerifyError) {
  RedisServer server(tls_server());
  TestLoop loop;
  auto connection = open(loop.get(), server.url(), [](ConnectionOptions& options) {
    verified(options);
    options.tls.server_name = "wrong.example";
  });
  const Outcome outcome = ping(loop, *connection);
  EXPECT_EQ(outcome.error, make_error_code(errc::tls_error)) << outcome.detail;
  expect_contains(outcome.detail, "TLS handshake with " + node(server.port()) +
                                      " failed: certificate verify failed (hostname mismatch: "
                                      "the certificate is not valid for wrong.example)");
}

TEST(Tls, IpAddressMismatchIsACertificateVerifyError) {
  RedisServer server(tls_server());
  TestLoop loop;
  auto connection = open(loop.get(), server.url(), [](ConnectionOptions& options) {
    verified(options);
    options.tls.server_name = "10.1.2.3";
  });
  const Outcome outcome = ping(loop, *connection);
  EXPECT_EQ(outcome.error, make_error_code(errc::tls_error)) << outcome.detail;
  expect_contains(outcome.detail, "IP address mismatch: the certificate is not valid for 10.1.2.3");
}

TEST(Tls, MissingClientCertificateIsAClearErrorNamingTheNode) {
  RedisServer server(tls_server(TlsClientAuth::required));
  TestLoop loop;
  auto connection = open(loop.get(), server.url(), [](ConnectionOptions& options) {
    options.tls.ca_file = test_certificates().ca_cert;
    options.connect_timeout = 2s;
  });
  const auto start = Clock::now();
  Outcome set;
  send(*connection, {"SET", "lock:must-not-exist", "x"}, 5s, record(set));
  ASSERT_TRUE(loop.run_until([&] { return set.done(); }));
  EXPECT_LT(elapsed_ms(start, set.at), 2000) << "the rejection must not wait for a timeout";
  EXPECT_EQ(set.error, make_error_code(errc::tls_error)) << set.detail;
  expect_contains(set.detail, "TLS handshake with " + node(server.port()) + " failed: ");
  expect_contains(set.detail,
                  "the server asked for a client certificate and none is configured: set "
                  "cert_file and key_file");
  EXPECT_TRUE(server.command({"GET", "lock:must-not-exist"}).is_nil());
}

TEST(Tls, OptionalClientCertificateMayBeOmitted) {
  RedisServer server(tls_server(TlsClientAuth::optional));
  TestLoop loop;
  auto connection = open(loop.get(), server.url(), [](ConnectionOptions& options) {
    options.tls.ca_file = test_certificates().ca_cert;
  });
  const Outcome outcome = ping(loop, *connection);
  EXPECT_TRUE(outcome.ok()) << outcome.detail;
}

TEST(Tls, InsecureSkipVerifyAcceptsAnUntrustedServer) {
  RedisServer server(tls_server());
  TestLoop loop;
  auto connection = open(loop.get(), server.url(), [](ConnectionOptions& options) {
    verified(options);
    options.tls.ca_file = test_certificates().other_ca_cert;
    options.tls.server_name = "wrong.example";
    options.tls.insecure_skip_verify = true;
  });
  const Outcome outcome = ping(loop, *connection);
  EXPECT_TRUE(outcome.ok()) << outcome.detail;
}

TEST(Tls, UnreadableCaFileNamesTheFileAndTheNode) {
  RedisServer server(tls_server());
  TestLoop loop;
  const std::string missing = test_certificates().dir + "/no-such-ca.crt";
  auto connection = open(loop.get(), server.url(), [&](ConnectionOptions& options) {
    verified(options);
    options.tls.ca_file = missing;
  });
  const Outcome outcome = ping(loop, *connection);
  EXPECT_EQ(outcome.error, make_error_code(errc::tls_error)) << outcome.detail;
  expect_contains(outcome.detail, "TLS setup for " + node(server.port()) +
                                      " failed: cannot load ca_file " + missing);
}

TEST(Tls, TlsClientOnAPlainPortFailsWithinTheConnectTimeout) {
  RedisServer server(tls_server());
  TestLoop loop;
  auto connection =
      open(loop.get(), "rediss://" + node(server.plain_port()), [](ConnectionOptions& options) {
        verified(options);
        options.connect_timeout = 500ms;
      });
  const auto start = Clock::now();
  const Outcome outcome = ping(loop, *connection, 5s);
  EXPECT_LT(elapsed_ms(start, outcome.at), 2000);
  EXPECT_TRUE(outcome.error == make_error_code(errc::tls_error) ||
              outcome.error == make_error_code(errc::connection_error))
      << outcome.error.message() << ": " << outcome.detail;
  expect_contains(outcome.detail, "TLS handshake with " + node(server.plain_port()));
}

TEST(Tls, PlainClientOnATlsPortFailsWithinTheConnectTimeout) {
  RedisServer server(tls_server());
  TestLoop loop;
  auto connection = open(loop.get(), "redis://" + node(server.port()),
                         [](ConnectionOptions& options) { options.connect_timeout = 500ms; });
  const auto start = Clock::now();
  const Outcome outcome = ping(loop, *connection, 2s);
  EXPECT_LT(elapsed_ms(start, outcome.at), 2500);
  EXPECT_TRUE(outcome.error) << "a plain PING on a TLS port cannot succeed";
  expect_contains(outcome.detail, node(server.port()));
  // Redis hangs up on plain text without a word: the detail says what that may mean.
  expect_contains(outcome.detail, "if the port serves TLS, use a rediss");
}

TEST(Tls, PlainPeerAnsweringTheHelloIsATlsError) {
  TestLoop loop;
  // What a plain Redis says when the hello happens to contain a line break.
  test::FakeRespServer plain(loop.get(), [](test::FakeRespServer::Peer& peer, std::string_view) {
    peer.send("-ERR unknown command\r\n");
  });
  auto connection = open(loop.get(), "rediss://" + node(plain.port()), verified);
  const Outcome outcome = ping(loop, *connection);
  EXPECT_EQ(outcome.error, make_error_code(errc::tls_error)) << outcome.detail;
  expect_contains(outcome.detail, "TLS handshake with " + node(plain.port()) + " failed: ");
  expect_contains(outcome.detail, "(is this a TLS port?)");
}

TEST(Tls, TlsAlertOnAPlainConnectionSaysToUseRediss) {
  TestLoop loop;
  // A fatal protocol_version alert, as a TLS server may send to a plain client.
  test::FakeRespServer tls_only(loop.get(), [](test::FakeRespServer::Peer& peer, std::string_view) {
    peer.send(std::string_view("\x15\x03\x03\x00\x02\x02\x46", 7));
  });
  auto connection = open(loop.get(), "redis://" + node(tls_only.port()));
  const Outcome outcome = ping(loop, *connection);
  EXPECT_EQ(outcome.error, make_error_code(errc::protocol_error)) << outcome.detail;
  expect_contains(outcome.detail, node(tls_only.port()) + ": protocol error: ");
  expect_contains(outcome.detail, "(the server speaks TLS: use a rediss:// URL)");
}

TEST(Tls, SilentPeerTimesOutTheHandshake) {
  TestLoop loop;
  // Accepts and reads, never answers: the ClientHello goes unanswered.
  test::FakeRespServer silent(loop.get(), [](test::FakeRespServer::Peer&, std::string_view) {});
  const auto start = Clock::now();  // the deadline starts inside open()
  auto connection =
      open(loop.get(), "rediss://" + node(silent.port()), [](ConnectionOptions& options) {
        verified(options);
        options.connect_timeout = 300ms;
      });
  const Outcome outcome = ping(loop, *connection, 5s);
  EXPECT_GE(elapsed_ms(start, outcome.at), 250);
  EXPECT_LT(elapsed_ms(start, outcome.at), 2000);
  EXPECT_EQ(outcome.error, make_error_code(errc::connection_error)) << outcome.detail;
  expect_contains(outcome.detail,
                  "TLS handshake with " + node(silent.port()) + ": timed out after 300 ms");
}

TEST(Tls, ThousandPipelinedCommandsKeepTheirOrder) {
  RedisServer server(tls_server());
  TestLoop loop;
  auto connection = open(loop.get(), server.url(), verified);
  const Outcome first = ping(loop, *connection);
  ASSERT_TRUE(first.ok()) << first.detail;

  // 1000 replies of ~120 bytes each span several TLS records and socket reads.
  constexpr int count = 1000;
  std::vector<std::string> payloads;
  for (int i = 0; i < count; ++i) payloads.push_back(std::to_string(i) + std::string(110, 'p'));
  std::vector<int> order;
  std::vector<std::string> echoed(count);
  int failures = 0;
  for (int i = 0; i < count; ++i) {
    send(*connection, {"ECHO", payloads[i]}, 10s, [&, i](const net::ReplyView& view) {
      order.push_back(i);
      if (view.error || view.reply == nullptr) {
        ++failures;
        return;
      }
      echoed[i].assign(view.reply->str, view.reply->len);
    });
  }
  const auto writes_before = connection->stats().writes;
  ASSERT_TRUE(loop.run_until([&] { return order.size() == count; }));
  EXPECT_EQ(failures, 0);
  for (int i = 0; i < count; ++i) {
    ASSERT_EQ(order[i], i);
    ASSERT_EQ(echoed[i], payloads[i]);
  }
  EXPECT_EQ(connection->stats().writes - writes_before, 1u) << "one write for one loop turn";
}

TEST(Tls, ReconnectsAfterTheServerRestarts) {
  RedisServer server(tls_server());
  TestLoop loop;
  auto connection = open(loop.get(), server.url(), verified);
  ASSERT_TRUE(ping(loop, *connection).ok());
  server.restart();
  const auto give_up = Clock::now() + long_wait;
  bool recovered = false;
  while (!recovered && Clock::now() < give_up) {
    recovered = ping(loop, *connection, 1s).ok();
    if (!recovered) loop.run_for(20ms);
  }
  EXPECT_TRUE(recovered);
  EXPECT_EQ(connection->stats().connects, 2u);
}

TEST(Tls, CloseDuringTheHandshakeCancelsCleanly) {
  TestLoop loop;
  // The peer takes the ClientHello and never answers, so the handshake is surely under
  // way when the connection is closed.
  bool hello_received = false;
  test::FakeRespServer silent(
      loop.get(), [&](test::FakeRespServer::Peer&, std::string_view) { hello_received = true; });
  auto connection = open(loop.get(), "rediss://" + node(silent.port()), verified);
  Outcome outcome;
  send(*connection, {"PING"}, 5s, record(outcome));
  ASSERT_TRUE(loop.run_until([&] { return hello_received; }));
  EXPECT_EQ(connection->state(), ConnectionState::connecting);
  connection.reset();
  EXPECT_EQ(outcome.calls, 1);
  EXPECT_EQ(outcome.error, make_error_code(errc::cancelled)) << outcome.detail;
}

}  // namespace
}  // namespace redlock::security_test
