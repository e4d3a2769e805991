// How a connection finds a Sentinel group's master, without I/O: which sentinel is asked
// next, what is dialled once one answered, how replies to SENTINEL and ROLE read, and the
// handshake that carries both.

#include "net/sentinel_resolution.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "net/handshake.hpp"
#include "parsed_reply.hpp"

namespace redlock::net {
namespace {

using test::parse;

Endpoint group_of_three() {
  auto group = parse_endpoint("redis-sentinel://:masterpw@127.0.0.1:1,127.0.0.1:2,[::1]:3/m/2");
  EXPECT_TRUE(group);
  group->sentinel_username = "watcher";
  group->sentinel_password = "sentinelpw";
  return *group;
}

NetError refused(const std::string& who) {
  return {make_error_code(errc::connection_error), "connect " + who + ": connection refused"};
}

TEST(SentinelResolution, AsksTheSentinelsInTurnWithTheirOwnCredentials) {
  SentinelResolution resolution(group_of_three());
  ASSERT_TRUE(resolution.asking_sentinel());
  EXPECT_EQ(resolution.target().host, "127.0.0.1");
  EXPECT_EQ(resolution.target().port, 1);
  EXPECT_EQ(resolution.target().username, "watcher");
  EXPECT_EQ(resolution.target().password, "sentinelpw");
  EXPECT_EQ(resolution.target().db, 0);  // a sentinel has no databases
  EXPECT_EQ(resolution.where(), "sentinel 127.0.0.1:1 (master 'm')");

  ASSERT_TRUE(resolution.sentinel_failed(refused("127.0.0.1:1")));
  EXPECT_EQ(resolution.target().port, 2);
  ASSERT_TRUE(resolution.sentinel_failed(refused("127.0.0.1:2")));
  EXPECT_EQ(resolution.target().host, "::1");
  EXPECT_EQ(resolution.where(), "sentinel [::1]:3 (master 'm')");
  // Each sentinel is asked once per round: the third failure ends it.
  EXPECT_FALSE(resolution.sentinel_failed(refused("[::1]:3")));
  const NetError error = resolution.exhausted();
  EXPECT_EQ(error.code, make_error_code(errc::connection_error));
  EXPECT_EQ(error.detail,
            "no sentinel of master 'm' named a reachable master: connect 127.0.0.1:1: connection "
            "refused; connect 127.0.0.1:2: connection refused; connect [::1]:3: connection "
            "refused");
}

TEST(SentinelResolution, TheFirstLookUpStartsWithTheFirstSentinelListed) {
  // The connection begins a round before each look-up, the first one included.
  SentinelResolution resolution(group_of_three());
  resolution.begin();
  EXPECT_EQ(resolution.target().port, 1);
  resolution.begin();
  EXPECT_EQ(resolution.target().port, 1);
  ASSERT_TRUE(resolution.sentinel_failed(refused("127.0.0.1:1")));
  EXPECT_EQ(resolution.target().port, 2);
  // A round that was used: the next one starts after the last sentinel it asked.
  resolution.begin();
  EXPECT_EQ(resolution.target().port, 3);
}

TEST(SentinelResolution, TheNamedMasterIsDialledWithTheGroupsCredentialsAndDb) {
  SentinelResolution resolution(group_of_three());
  ASSERT_TRUE(resolution.sentinel_failed(refused("127.0.0.1:1")));
  resolution.master_named("10.0.0.7", 6380);
  EXPECT_FALSE(resolution.asking_sentinel());
  EXPECT_EQ(resolution.target().host, "10.0.0.7");
  EXPECT_EQ(resolution.target().port, 6380);
  EXPECT_TRUE(resolution.target().username.empty());
  EXPECT_EQ(resolution.target().password, "masterpw");
  EXPECT_EQ(resolution.target().db, 2);
  EXPECT_FALSE(resolution.target().is_sentinel_group());
  EXPECT_EQ(resolution.naming_sentinel(), "127.0.0.1:2");
  EXPECT_EQ(resolution.where(), "master 'm' at 10.0.0.7:6380 (named by sentinel 127.0.0.1:2)");
}

TEST(SentinelResolution, ANewRoundStartsAfterTheSentinelThatAnsweredLast) {
  // That sentinel may be the one naming a stale master: another one is heard first.
  SentinelResolution resolution(group_of_three());
  resolution.master_named("10.0.0.7", 6380);  // named by sentinel 1
  resolution.begin();
  ASSERT_TRUE(resolution.asking_sentinel());
  EXPECT_EQ(resolution.target().port, 2);
  resolution.master_named("10.0.0.8", 6380);
  resolution.begin();
  EXPECT_EQ(resolution.target().port, 3);
  resolution.master_named("10.0.0.8", 6380);
  resolution.begin();
  EXPECT_EQ(resolution.target().port, 1);  // around again
  // A round in which every sentinel failed leaves the next round where it stopped, and
  // still gives each sentinel one chance.
  ASSERT_TRUE(resolution.sentinel_failed(refused("a")));
  ASSERT_TRUE(resolution.sentinel_failed(refused("b")));
  ASSERT_FALSE(resolution.sentinel_failed(refused("c")));
  resolution.begin();
  EXPECT_EQ(resolution.target().port, 1);
  EXPECT_EQ(resolution.exhausted().detail,
            "no sentinel of master 'm' named a reachable master: ");  // nothing failed yet
}

TEST(SentinelResolution, ASwitchMovesTheMasterOnlyForThisGroupAndAnotherAddress) {
  SentinelResolution resolution(group_of_three());
  // Before any sentinel answered, any switch of this group is news.
  EXPECT_TRUE(resolution.switch_moves_master("m 10.0.0.7 6380 10.0.0.8 6381"));
  resolution.master_named("10.0.0.7", 6380);
  EXPECT_TRUE(resolution.switch_moves_master("m 10.0.0.7 6380 10.0.0.8 6381"));
  EXPECT_FALSE(resolution.switch_moves_master("m 10.0.0.8 6381 10.0.0.7 6380"));  // followed
  EXPECT_FALSE(resolution.switch_moves_master("other 10.0.0.7 6380 10.0.0.8 6381"));
  EXPECT_FALSE(resolution.switch_moves_master("mm 10.0.0.7 6380 10.0.0.8 6381"));
  EXPECT_FALSE(resolution.switch_moves_master("m 10.0.0.7 6380 10.0.0.8"));
  EXPECT_FALSE(resolution.switch_moves_master("m 10.0.0.7 6380 10.0.0.8 6381 extra"));
  EXPECT_FALSE(resolution.switch_moves_master(""));
  EXPECT_EQ(resolution.naming_endpoint().port, 1);
  EXPECT_EQ(resolution.naming_endpoint().password, "sentinelpw");
}

// Right after a failover some sentinels may still name the old master, which stays a
// master until they demote it: the master the switch announced is dialled first.
TEST(SentinelResolution, TheRoundAfterASwitchDialsTheAnnouncedMasterFirst) {
  SentinelResolution resolution(group_of_three());
  resolution.master_named("10.0.0.7", 6380);  // named by sentinel 1
  resolution.follow_switch("m 10.0.0.7 6380 10.0.0.8 6381");
  resolution.begin();
  ASSERT_FALSE(resolution.asking_sentinel());
  EXPECT_EQ(resolution.target().host, "10.0.0.8");
  EXPECT_EQ(resolution.target().port, 6381);
  EXPECT_EQ(resolution.target().password, "masterpw");
  EXPECT_EQ(resolution.target().db, 2);
  EXPECT_EQ(resolution.where(),
            "master 'm' at 10.0.0.8:6381 (named by sentinel 127.0.0.1:1 in +switch-master)");
  // Once: if that master fails, the next round asks the sentinels.
  resolution.begin();
  EXPECT_TRUE(resolution.asking_sentinel());
  // An announcement whose port is not one is not followed.
  resolution.master_named("10.0.0.8", 6381);
  resolution.follow_switch("m 10.0.0.8 6381 10.0.0.9 99999");
  resolution.begin();
  EXPECT_TRUE(resolution.asking_sentinel());
}

TEST(SentinelReplies, MasterAddress) {
  std::string host;
  std::uint16_t port = 0;
  std::string problem;
  ASSERT_TRUE(read_master_address(parse("*2\r\n$8\r\n10.0.0.7\r\n$4\r\n6380\r\n").get(), host, port,
                                  problem));
  EXPECT_EQ(host, "10.0.0.7");
  EXPECT_EQ(port, 6380);
  EXPECT_FALSE(read_master_address(parse("*-1\r\n").get(), host, port, problem));
  EXPECT_EQ(problem, "does not monitor this master name");
  EXPECT_FALSE(read_master_address(parse("$-1\r\n").get(), host, port, problem));
  EXPECT_EQ(problem, "does not monitor this master name");
  EXPECT_FALSE(read_master_address(parse("-NOAUTH Authentication required.\r\n").get(), host, port,
                                   problem));
  EXPECT_EQ(problem, "answered NOAUTH Authentication required.");
  EXPECT_FALSE(
      read_master_address(parse("*2\r\n$1\r\nh\r\n$5\r\n70000\r\n").get(), host, port, problem));
  EXPECT_EQ(problem, "named a bad address 'h':'70000'");
  EXPECT_FALSE(read_master_address(parse("*1\r\n$1\r\nh\r\n").get(), host, port, problem));
  EXPECT_EQ(problem, "answered a reply that is not [host, port]");
}

TEST(SentinelReplies, Role) {
  std::string role;
  EXPECT_TRUE(read_role_is_master(parse("*3\r\n$6\r\nmaster\r\n:10\r\n*0\r\n").get(), role));
  EXPECT_FALSE(read_role_is_master(
      parse("*5\r\n$5\r\nslave\r\n$9\r\n127.0.0.1\r\n:6379\r\n$9\r\nconnected\r\n:1\r\n").get(),
      role));
  EXPECT_EQ(role, "slave");
  EXPECT_FALSE(read_role_is_master(parse("*2\r\n$8\r\nsentinel\r\n*0\r\n").get(), role));
  EXPECT_EQ(role, "sentinel");
  EXPECT_FALSE(read_role_is_master(parse(":1\r\n").get(), role));
  EXPECT_EQ(role, "a reply that is not a role");
}

// SENTINEL MASTER as a flat array; `fields` are name, value pairs after ip and port.
std::string master_record(const std::string& ip, const std::string& port,
                          std::vector<std::string> fields) {
  std::vector<std::string> words{"ip", ip, "port", port};
  words.insert(words.end(), fields.begin(), fields.end());
  std::string resp = "*" + std::to_string(words.size()) + "\r\n";
  for (const auto& word : words) {
    resp += "$" + std::to_string(word.size()) + "\r\n" + word + "\r\n";
  }
  return resp;
}

TEST(SentinelReplies, RoleReportedTime) {
  const auto read = [](const std::string& resp) {
    return read_role_reported_time(parse(resp.c_str()).get(), "10.0.0.7", 6380);
  };
  using std::chrono::milliseconds;
  EXPECT_EQ(read(master_record("10.0.0.7", "6380", {"role-reported-time", "120"})),
            milliseconds(120));
  // The record of another server: the sentinel names the replica it is promoting, while
  // its record still describes the old master (the failover has not ended).
  EXPECT_EQ(read(master_record("10.0.0.8", "6380", {"role-reported-time", "9000"})),
            milliseconds(0));
  EXPECT_EQ(read(master_record("10.0.0.7", "6381", {"role-reported-time", "9000"})),
            milliseconds(0));
  // A field that only starts like it, a value that is not a number or negative, no such
  // field, an error reply: unknown, never a made-up age.
  EXPECT_FALSE(read(master_record("10.0.0.7", "6380", {"role-reported-timex", "5"})));
  EXPECT_FALSE(read(master_record("10.0.0.7", "6380", {"role-reported-time", "5x"})));
  EXPECT_FALSE(read(master_record("10.0.0.7", "6380", {"role-reported-time", "-5"})));
  EXPECT_FALSE(read(master_record("10.0.0.7", "6380", {"name", "m"})));
  EXPECT_FALSE(read("-ERR No such master with that name\r\n"));
}

TEST(SentinelReplies, NotMasterErrors) {
  EXPECT_TRUE(is_not_master_error("READONLY You can't write against a read only replica."));
  EXPECT_TRUE(is_not_master_error("MASTERDOWN Link with MASTER is down"));
  EXPECT_FALSE(is_not_master_error("ERR READONLY in the middle"));
  EXPECT_FALSE(is_not_master_error("NOSCRIPT No matching script"));
}

TEST(SentinelHandshake, AsksTheSentinelAfterAuthenticating) {
  SentinelResolution resolution(group_of_three());
  Handshake handshake;
  std::string out;
  ASSERT_TRUE(handshake.start(resolution.target(), out, Handshake::Goal::ask_sentinel));
  EXPECT_EQ(out,
            "*3\r\n$4\r\nAUTH\r\n$7\r\nwatcher\r\n$10\r\nsentinelpw\r\n"
            "*3\r\n$8\r\nSENTINEL\r\n$23\r\nGET-MASTER-ADDR-BY-NAME\r\n$1\r\nm\r\n"
            "*3\r\n$8\r\nSENTINEL\r\n$6\r\nMASTER\r\n$1\r\nm\r\n");
  NetError error;
  EXPECT_EQ(handshake.on_reply(parse("+OK\r\n").get(), resolution.target(), "s", error),
            Handshake::Outcome::more);
  EXPECT_EQ(handshake.on_reply(parse("*2\r\n$8\r\n10.0.0.7\r\n$4\r\n6380\r\n").get(),
                               resolution.target(), "s", error),
            Handshake::Outcome::more);
  EXPECT_EQ(
      handshake.on_reply(
          parse(master_record("10.0.0.7", "6380", {"role-reported-time", "2777"}).c_str()).get(),
          resolution.target(), "s", error),
      Handshake::Outcome::done);
  EXPECT_EQ(handshake.named_host(), "10.0.0.7");
  EXPECT_EQ(handshake.named_port(), 6380);
  EXPECT_EQ(handshake.named_role_age(), std::chrono::milliseconds(2777));

  // A sentinel whose ACL refuses SENTINEL MASTER still names the master; the age is unknown.
  ASSERT_TRUE(handshake.start(resolution.target(), out, Handshake::Goal::ask_sentinel));
  handshake.on_reply(parse("+OK\r\n").get(), resolution.target(), "s", error);
  handshake.on_reply(parse("*2\r\n$8\r\n10.0.0.7\r\n$4\r\n6380\r\n").get(), resolution.target(),
                     "s", error);
  EXPECT_EQ(handshake.on_reply(parse("-NOPERM this user has no permissions\r\n").get(),
                               resolution.target(), "s", error),
            Handshake::Outcome::done);
  EXPECT_EQ(handshake.named_port(), 6380);
  EXPECT_FALSE(handshake.named_role_age());

  // A sentinel that does not know the name fails the step, naming itself.
  ASSERT_TRUE(handshake.start(resolution.target(), out, Handshake::Goal::ask_sentinel));
  handshake.on_reply(parse("+OK\r\n").get(), resolution.target(), resolution.where(), error);
  EXPECT_EQ(
      handshake.on_reply(parse("*-1\r\n").get(), resolution.target(), resolution.where(), error),
      Handshake::Outcome::failed);
  EXPECT_EQ(error.detail, "sentinel 127.0.0.1:1 (master 'm') does not monitor this master name");
}

TEST(SentinelHandshake, ConfirmsTheMasterWithRoleAfterAuthAndSelect) {
  SentinelResolution resolution(group_of_three());
  resolution.master_named("10.0.0.7", 6380);
  Handshake handshake;
  std::string out;
  ASSERT_TRUE(handshake.start(resolution.target(), out, Handshake::Goal::confirm_master));
  EXPECT_EQ(out,
            "*2\r\n$4\r\nAUTH\r\n$8\r\nmasterpw\r\n"
            "*2\r\n$6\r\nSELECT\r\n$1\r\n2\r\n"
            "*1\r\n$4\r\nROLE\r\n");
  NetError error;
  const auto& target = resolution.target();
  const auto& where = resolution.where();
  EXPECT_EQ(handshake.on_reply(parse("+OK\r\n").get(), target, where, error),
            Handshake::Outcome::more);
  EXPECT_EQ(handshake.on_reply(parse("+OK\r\n").get(), target, where, error),
            Handshake::Outcome::more);
  EXPECT_EQ(handshake.on_reply(
                parse("*5\r\n$5\r\nslave\r\n$1\r\nh\r\n:1\r\n$9\r\nconnected\r\n:1\r\n").get(),
                target, where, error),
            Handshake::Outcome::failed);
  EXPECT_EQ(error.code, make_error_code(errc::connection_error));
  EXPECT_EQ(error.detail,
            "ROLE on master 'm' at 10.0.0.7:6380 (named by sentinel 127.0.0.1:1) answered "
            "'slave', not master");

  ASSERT_TRUE(handshake.start(target, out, Handshake::Goal::confirm_master));
  handshake.on_reply(parse("+OK\r\n").get(), target, where, error);
  handshake.on_reply(parse("+OK\r\n").get(), target, where, error);
  EXPECT_EQ(
      handshake.on_reply(parse("*3\r\n$6\r\nmaster\r\n:0\r\n*0\r\n").get(), target, where, error),
      Handshake::Outcome::done);
}

}  // namespace
}  // namespace redlock::net
