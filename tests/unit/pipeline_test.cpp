// The connection's pipeline without a socket: commands in, bytes out; scripted reply
// bytes and a manual clock in, the callbacks to run out. Every rule of
// net/pipeline.hpp is tried here in microseconds: replies matched in order, abandoned
// slots whose late replies are dropped, expiry decided only when asked, the dead-node
// bound, max_pending, failing everything once, and the EVALSHA -> EVAL resend.

#include "net/pipeline.hpp"

#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "net/command_encoder.hpp"
#include "scripts/script.hpp"

namespace redlock::net {
namespace {

using namespace std::chrono_literals;

constexpr std::uint64_t ms = 1'000'000;  // the pipeline counts nanoseconds

// What one callback received; `calls` proves it ran exactly once.
struct Outcome {
  int calls = 0;
  std::error_code error;
  std::string detail;
  std::string value;  // the reply as text: a string, status or integer
};

ReplyCallback record(Outcome& outcome) {
  return [&outcome](const ReplyView& view) {
    ++outcome.calls;
    outcome.error = view.error;
    outcome.detail = std::string(view.detail);
    if (view.reply == nullptr) return;
    if (view.reply->type == REDIS_REPLY_INTEGER) {
      outcome.value = std::to_string(view.reply->integer);
    } else if (view.reply->str != nullptr) {
      outcome.value.assign(view.reply->str, view.reply->len);
    }
  };
}

std::string encode(std::initializer_list<std::string_view> argv) {
  std::string out;
  append_command(out, std::vector<std::string_view>(argv));
  return out;
}

const scripts::Script acquire_script{"acquire", "return redis.call('SET', KEYS[1], ARGV[1], 'NX')",
                                     "1111111111111111111111111111111111111111"};
const scripts::Script release_script{"release", "return redis.call('DEL', KEYS[1])",
                                     "2222222222222222222222222222222222222222"};

// A pipeline with a manual clock, driven the way the connection drives it.
class PipelineTest : public ::testing::Test {
 protected:
  PipelineOptions options() {
    PipelineOptions options;
    options.where = "node:7101";
    return options;
  }

  void submit(std::initializer_list<std::string_view> argv, std::chrono::milliseconds timeout,
              Outcome& outcome) {
    auto refused =
        pipeline.command(std::vector<std::string_view>(argv), timeout, record(outcome), now);
    if (refused) refused->run();
  }

  void submit_eval(const scripts::Script& script, std::string_view key, std::string_view arg,
                   std::chrono::milliseconds timeout, Outcome& outcome) {
    const std::array<std::string_view, 1> keys{key};
    const std::array<std::string_view, 1> args{arg};
    auto refused = pipeline.eval(script, keys, args, timeout, record(outcome), now);
    if (refused) refused->run();
  }

  // The script has been sent on this connection once (as EVAL, answered), so the next use
  // is an EVALSHA: what a server that lost it (SCRIPT FLUSH, failover) answers NOSCRIPT.
  void sent_once(const scripts::Script& script) {
    Outcome first;
    submit_eval(script, "earlier", "v0", 100ms, first);
    ASSERT_EQ(flush().find("$4\r\nEVAL\r\n"), 4u) << "the first use is an EVAL";
    receive("+OK\r\n");
  }

  // What the connection's flush writes: every queued command's bytes.
  std::string flush() {
    if (!pipeline.has_unsent()) return {};
    std::string& unsent = pipeline.take_unsent();
    std::string bytes;
    bytes.swap(unsent);
    return bytes;
  }

  // Feeds reply bytes and runs what each reply completes, as the connection does.
  void receive(std::string_view bytes) {
    NetError error;
    pipeline.feed(bytes.data(), bytes.size());
    for (;;) {
      ReplyPtr reply = pipeline.read(error);
      ASSERT_FALSE(error.code) << error.detail;
      if (!reply) return;
      Completion completion;
      ASSERT_TRUE(pipeline.match(reply.get(), completion, error)) << error.detail;
      if (!completion.reloaded_script.empty()) reloaded.emplace_back(completion.reloaded_script);
      completion.run();
    }
  }

  // The connection's deadline check: runs the expired callbacks, or returns the reason
  // the node counts as dead.
  std::optional<NetError> check(bool connecting = false) {
    std::vector<Completion> expired;
    auto dead = pipeline.expire(now, connecting, expired);
    for (Completion& completion : expired) completion.run();
    return dead;
  }

  void fail_all(std::error_code error, std::string_view detail) {
    std::vector<Completion> failed;
    pipeline.fail_all(error, detail, now, failed);
    for (Completion& completion : failed) completion.run();
  }

  std::uint64_t now = 1'000 * ms;
  Pipeline pipeline{options()};
  std::vector<std::string> reloaded;  // scripts a NOSCRIPT reply made match() queue again
};

TEST_F(PipelineTest, CommandsGoOutInOneWriteAndRepliesMatchInOrder) {
  Outcome first, second;
  submit({"GET", "a"}, 100ms, first);
  submit({"ECHO", "b"}, 100ms, second);
  EXPECT_EQ(flush(), encode({"GET", "a"}) + encode({"ECHO", "b"}));
  EXPECT_EQ(pipeline.in_flight(), 2u);
  EXPECT_FALSE(pipeline.has_unsent());

  receive("$1\r\nA\r\n$1\r\n");  // the second reply is cut in two
  EXPECT_EQ(first.calls, 1);
  EXPECT_EQ(first.value, "A");
  EXPECT_EQ(second.calls, 0);
  EXPECT_TRUE(pipeline.mid_reply());
  receive("b\r\n");
  EXPECT_EQ(second.calls, 1);
  EXPECT_EQ(second.value, "b");
  EXPECT_EQ(pipeline.pending(), 0u);
  EXPECT_EQ(pipeline.commands(), 2u);
}

TEST_F(PipelineTest, ErrorRepliesCarryRedisTextAndDenialsSayWhatAndWhere) {
  sent_once(acquire_script);
  sent_once(release_script);
  Outcome plain, denied, empty;
  submit({"INCR", "a"}, 100ms, plain);
  submit_eval(acquire_script, "k", "v", 100ms, denied);
  submit({"GET", "a"}, 100ms, empty);
  flush();
  receive("-ERR value is not an integer\r\n-NOPERM this user has no permissions\r\n-\r\n");
  EXPECT_EQ(plain.error, make_error_code(errc::redis_error));
  EXPECT_EQ(plain.detail, "ERR value is not an integer");
  EXPECT_EQ(denied.detail,
            "NOPERM this user has no permissions (EVALSHA of the acquire script on node:7101)");
  EXPECT_EQ(empty.detail, "node:7101: error reply without text");
}

TEST_F(PipelineTest, AReplyWithNoCommandInFlightIsAProtocolError) {
  Outcome queued;
  submit({"PING"}, 100ms, queued);  // queued, not written: its reply cannot come yet
  NetError error;
  const std::string bytes = "+PONG\r\n";
  pipeline.feed(bytes.data(), bytes.size());
  ReplyPtr reply = pipeline.read(error);
  ASSERT_NE(reply, nullptr);
  Completion completion;
  EXPECT_FALSE(pipeline.match(reply.get(), completion, error));
  EXPECT_EQ(error.code, make_error_code(errc::protocol_error));
  EXPECT_NE(error.detail.find("unexpected reply with no command in flight"), std::string::npos);
  EXPECT_EQ(queued.calls, 0);
}

// A command whose deadline passed fails alone; its slot stays so that its reply, when it
// comes, is dropped and never taken for the next command's.
TEST_F(PipelineTest, LateReplyOfAnAbandonedCommandIsDroppedNotMatchedToTheNext) {
  Outcome slow, next;
  submit({"GET", "slow"}, 50ms, slow);
  flush();
  now += 60 * ms;
  EXPECT_FALSE(check());
  EXPECT_EQ(slow.calls, 1);
  EXPECT_EQ(slow.error, make_error_code(errc::timeout));
  EXPECT_EQ(slow.detail, "node:7101: no reply within 50 ms");
  EXPECT_EQ(pipeline.pending(), 1u) << "the abandoned slot awaits its reply";

  submit({"GET", "next"}, 1000ms, next);
  flush();
  receive("$4\r\nslow\r\n");
  EXPECT_EQ(next.calls, 0) << "the first reply belongs to the abandoned command";
  EXPECT_EQ(pipeline.late_replies(), 1u);
  receive("$4\r\nnext\r\n");
  EXPECT_EQ(next.calls, 1);
  EXPECT_EQ(next.value, "next");
  EXPECT_EQ(slow.calls, 1) << "a late reply never runs the callback again";
  EXPECT_EQ(pipeline.pending(), 0u);
}

// The clock passing a deadline decides nothing: a reply read before the check is the
// command's reply, however late the check runs (the connection checks after a poll).
TEST_F(PipelineTest, ExpiryIsDecidedOnlyByTheCheckSoARepliesReadFirstWin) {
  Outcome command;
  submit({"GET", "a"}, 50ms, command);
  flush();
  now += 500 * ms;  // the loop thread was stalled well past the deadline
  EXPECT_LE(pipeline.next_deadline(), now) << "the connection is asked to look";
  receive("$2\r\nok\r\n");  // ...but the poll reads the reply first
  EXPECT_FALSE(check());
  EXPECT_EQ(command.calls, 1);
  EXPECT_FALSE(command.error);
  EXPECT_EQ(command.value, "ok");
  EXPECT_EQ(pipeline.late_replies(), 0u);
}

TEST_F(PipelineTest, TheNodeIsDeadOnlyWhenAnUnansweredCommandPassesTheBound) {
  Outcome short_one, long_one;
  submit({"GET", "a"}, 50ms, short_one);  // bound: max(1 s, 10 x 50 ms) = 1 s
  submit({"GET", "b"}, 200ms, long_one);  // bound: max(1 s, 10 x 200 ms) = 2 s
  flush();
  const std::uint64_t start = now;

  now = start + 50 * ms;
  EXPECT_FALSE(check());
  EXPECT_EQ(short_one.error, make_error_code(errc::timeout));
  now = start + 200 * ms;
  EXPECT_FALSE(check());
  EXPECT_EQ(long_one.error, make_error_code(errc::timeout));
  EXPECT_EQ(pipeline.next_deadline(), start + 1050 * ms) << "the next look is the first bound";

  now = start + 1049 * ms;
  EXPECT_FALSE(check()) << "1 ms before the bound the node is only slow";
  now = start + 1050 * ms;
  auto dead = check();
  ASSERT_TRUE(dead);
  EXPECT_EQ(dead->code, make_error_code(errc::connection_error));
  EXPECT_EQ(dead->detail, "node:7101: connection dropped: a command got no reply within 1050 ms");
  EXPECT_EQ(short_one.calls, 1);
  EXPECT_EQ(long_one.calls, 1);
}

TEST_F(PipelineTest, TheDeadNodeBoundScalesWithTheTimeoutAndWaitsForTheReplyItself) {
  Outcome command;
  submit({"GET", "a"}, 300ms, command);  // bound: 10 x 300 ms = 3 s after the deadline
  flush();
  const std::uint64_t start = now;
  now = start + 300 * ms;
  EXPECT_FALSE(check());
  now = start + 3299 * ms;
  EXPECT_FALSE(check());
  receive("$1\r\nx\r\n");  // the node was slow, not dead: nothing left to wait for
  now = start + 5000 * ms;
  EXPECT_FALSE(check());
  EXPECT_EQ(pipeline.pending(), 0u);
  EXPECT_EQ(command.calls, 1);
}

// Commands not written yet (the connection is still connecting) are removed with their
// bytes, and the ones behind them keep theirs.
TEST_F(PipelineTest, QueuedCommandsExpireWithTheirBytes) {
  Outcome early, late;
  submit({"GET", "early"}, 50ms, early);
  submit({"GET", "late"}, 500ms, late);
  now += 60 * ms;
  EXPECT_FALSE(check(/*connecting=*/true));
  EXPECT_EQ(early.calls, 1);
  EXPECT_EQ(early.detail, "node:7101: no reply within 50 ms (not sent: still connecting)");
  EXPECT_EQ(pipeline.pending(), 1u);
  EXPECT_EQ(flush(), encode({"GET", "late"}));
  receive("$4\r\nlate\r\n");
  EXPECT_EQ(late.value, "late");
}

// A command queued during the first connect has its timeout start at the connect
// deadline (the connection passes it as `now`); when the connection is up sooner, the
// timeout starts then. A command with a nearer deadline keeps it.
TEST_F(PipelineTest, TimeoutsQueuedForTheFirstConnectStartWhenItIsUp) {
  Outcome first_contact, ordinary;
  const std::uint64_t submitted = now;
  const std::uint64_t connect_deadline = now + 1000 * ms;
  auto refused = pipeline.command(std::vector<std::string_view>{"GET", "a"}, 50ms,
                                  record(first_contact), connect_deadline);
  ASSERT_FALSE(refused);
  submit({"GET", "b"}, 50ms, ordinary);
  now += 30 * ms;  // the connection is up 30 ms after the submission
  pipeline.start_timeouts(now);
  EXPECT_EQ(pipeline.next_deadline(), submitted + 50 * ms);
  now = submitted + 60 * ms;
  EXPECT_FALSE(check());
  EXPECT_EQ(ordinary.calls, 1) << "its deadline came first and stays";
  EXPECT_EQ(first_contact.calls, 0) << "its 50 ms started when the connection was up";
  now = submitted + 81 * ms;
  EXPECT_FALSE(check());
  EXPECT_EQ(first_contact.calls, 1);
  EXPECT_EQ(first_contact.error, make_error_code(errc::timeout));
}

TEST_F(PipelineTest, MaxPendingCountsAbandonedSlots) {
  PipelineOptions small = options();
  small.max_pending = 2;
  Pipeline bounded(small);
  std::array<Outcome, 3> outcomes;
  for (Outcome& outcome : outcomes) {
    auto refused =
        bounded.command(std::vector<std::string_view>{"GET", "a"}, 50ms, record(outcome), now);
    if (refused) refused->run();
  }
  EXPECT_EQ(outcomes[0].calls, 0);
  EXPECT_EQ(outcomes[1].calls, 0);
  EXPECT_EQ(outcomes[2].calls, 1);
  EXPECT_EQ(outcomes[2].error, make_error_code(errc::overloaded));
  EXPECT_EQ(outcomes[2].detail, "node:7101: 2 commands already pending (max_pending)");

  bounded.take_unsent();
  std::vector<Completion> expired;
  ASSERT_FALSE(bounded.expire(now + 60 * ms, false, expired));
  for (Completion& completion : expired) completion.run();
  Outcome more;
  auto refused =
      bounded.command(std::vector<std::string_view>{"GET", "b"}, 50ms, record(more), now);
  ASSERT_TRUE(refused) << "timed-out commands still hold their slots until replies come";
  EXPECT_EQ(refused->error, make_error_code(errc::overloaded));
}

TEST_F(PipelineTest, NoTimeLeftIsRefusedAtOnce) {
  Outcome outcome;
  submit({"GET", "a"}, 0ms, outcome);
  EXPECT_EQ(outcome.calls, 1);
  EXPECT_EQ(outcome.error, make_error_code(errc::timeout));
  EXPECT_EQ(pipeline.pending(), 0u);
}

// close(): every pending callback runs exactly once with cancelled, in order; an
// abandoned one (already answered with timeout) does not run again.
TEST_F(PipelineTest, FailAllAnswersEveryPendingCallbackExactlyOnce) {
  Outcome abandoned, in_flight, queued;
  std::vector<int> order;
  submit({"GET", "a"}, 50ms, abandoned);
  submit({"GET", "b"}, 500ms, in_flight);
  flush();
  submit({"GET", "c"}, 500ms, queued);
  now += 60 * ms;
  EXPECT_FALSE(check());
  ASSERT_EQ(abandoned.calls, 1);

  fail_all(make_error_code(errc::cancelled), "node:7101: connection closed");
  EXPECT_EQ(abandoned.calls, 1);
  EXPECT_EQ(abandoned.error, make_error_code(errc::timeout));
  for (Outcome* outcome : {&in_flight, &queued}) {
    EXPECT_EQ(outcome->calls, 1);
    EXPECT_EQ(outcome->error, make_error_code(errc::cancelled));
    EXPECT_EQ(outcome->detail, "node:7101: connection closed");
  }
  EXPECT_EQ(pipeline.pending(), 0u);
  EXPECT_FALSE(pipeline.has_unsent());
  fail_all(make_error_code(errc::cancelled), "again");
  EXPECT_EQ(in_flight.calls, 1);
  EXPECT_EQ(queued.calls, 1);
}

// A dropped connection fails with its own error, except commands whose deadline passed
// by then, which report their timeout.
TEST_F(PipelineTest, FailAllReportsTimeoutForCommandsPastTheirDeadline) {
  Outcome expired, live;
  submit({"GET", "a"}, 50ms, expired);
  submit({"GET", "b"}, 500ms, live);
  flush();
  now += 100 * ms;
  fail_all(make_error_code(errc::connection_error), "read node:7101: connection reset");
  EXPECT_EQ(expired.error, make_error_code(errc::timeout));
  EXPECT_EQ(live.error, make_error_code(errc::connection_error));
  EXPECT_EQ(live.detail, "read node:7101: connection reset");
}

// A fresh connection may reach a server that never saw the script: its first use sends
// the source, later ones the digest, and a reconnect starts over.
TEST_F(PipelineTest, TheFirstUseOfAScriptOnAConnectionSendsItsSource) {
  Outcome first, second, after_drop;
  submit_eval(acquire_script, "lock", "v1", 100ms, first);
  EXPECT_EQ(flush(), encode({"EVAL", acquire_script.source, "1", "lock", "v1"}));
  receive("+OK\r\n");
  submit_eval(acquire_script, "lock", "v2", 100ms, second);
  EXPECT_EQ(flush(), encode({"EVALSHA", acquire_script.sha1, "1", "lock", "v2"}));
  receive("+OK\r\n");
  fail_all(make_error_code(errc::connection_error), "node:7101: connection reset");
  submit_eval(acquire_script, "lock", "v3", 100ms, after_drop);
  EXPECT_EQ(flush(), encode({"EVAL", acquire_script.source, "1", "lock", "v3"}));
}

// A script the node lacks must not be overtaken by one it has: an acquire (never sent on
// this connection) and the release behind it (sent before) go out in order, the acquire
// with its source, so the node runs it first; with an EVALSHA the node would answer
// NOSCRIPT and run the release before the acquire's resend.
TEST_F(PipelineTest, AScriptTheNodeMayLackIsNotOvertakenByOneItHas) {
  sent_once(release_script);
  Outcome acquire, release;
  submit_eval(acquire_script, "lock", "v1", 100ms, acquire);
  submit_eval(release_script, "lock", "v1", 100ms, release);
  EXPECT_EQ(flush(), encode({"EVAL", acquire_script.source, "1", "lock", "v1"}) +
                         encode({"EVALSHA", release_script.sha1, "1", "lock", "v1"}));
  receive("+OK\r\n:1\r\n");
  EXPECT_EQ(acquire.value, "OK");
  EXPECT_EQ(release.value, "1");
}

// Where this process cannot compute SHA-1 (a FIPS configuration), a script has no local
// digest: the connection sends it with EVAL and asks the server its digest once, with the
// SCRIPT LOAD behind that EVAL, and from the answer on sends EVALSHA. Before the answer
// it keeps sending the source; an EVALSHA without a digest would meet NOSCRIPT every time.
const scripts::Script undigested_script{"inspect", "return redis.call('PTTL', KEYS[1])", ""};
const std::string server_digest = "3333333333333333333333333333333333333333";

TEST_F(PipelineTest, AScriptWithoutALocalDigestTakesItFromTheServer) {
  Outcome first, second, third;
  submit_eval(undigested_script, "lock", "v1", 100ms, first);
  EXPECT_EQ(flush(), encode({"EVAL", undigested_script.source, "1", "lock", "v1"}) +
                         encode({"SCRIPT", "LOAD", undigested_script.source}));
  submit_eval(undigested_script, "lock", "v2", 100ms, second);
  EXPECT_EQ(flush(), encode({"EVAL", undigested_script.source, "1", "lock", "v2"}))
      << "the digest is not known yet, and one SCRIPT LOAD is on its way";
  receive(":10\r\n$40\r\n" + server_digest + "\r\n:20\r\n");
  EXPECT_EQ(first.value, "10");
  EXPECT_EQ(second.value, "20") << "the SCRIPT LOAD's answer went to no caller";
  submit_eval(undigested_script, "lock", "v3", 100ms, third);
  EXPECT_EQ(flush(), encode({"EVALSHA", server_digest, "1", "lock", "v3"}));
  receive(":30\r\n");
  EXPECT_EQ(third.value, "30");
  EXPECT_EQ(third.calls, 1);
}

// The digest is the script's on every server, so a reconnect needs no new SCRIPT LOAD:
// the script's first use there sends its source (the server may lack it), then EVALSHA.
TEST_F(PipelineTest, ADigestTakenFromTheServerOutlivesAReconnect) {
  Outcome first, after_drop, later;
  submit_eval(undigested_script, "lock", "v1", 100ms, first);
  flush();
  receive(":1\r\n$40\r\n" + server_digest + "\r\n");
  fail_all(make_error_code(errc::connection_error), "node:7101: connection reset");
  submit_eval(undigested_script, "lock", "v2", 100ms, after_drop);
  EXPECT_EQ(flush(), encode({"EVAL", undigested_script.source, "1", "lock", "v2"}));
  receive(":2\r\n");
  submit_eval(undigested_script, "lock", "v3", 100ms, later);
  EXPECT_EQ(flush(), encode({"EVALSHA", server_digest, "1", "lock", "v3"}));
}

// An ACL user without +script|load: the script keeps working with EVAL, and the
// connection does not ask again with every call.
TEST_F(PipelineTest, ARefusedScriptLoadLeavesTheScriptToEval) {
  Outcome first, second;
  submit_eval(undigested_script, "lock", "v1", 100ms, first);
  flush();
  receive(":1\r\n-NOPERM this user has no permissions to run the 'script|load' command\r\n");
  EXPECT_EQ(first.calls, 1);
  EXPECT_FALSE(first.error);
  submit_eval(undigested_script, "lock", "v2", 100ms, second);
  EXPECT_EQ(flush(), encode({"EVAL", undigested_script.source, "1", "lock", "v2"}));
}

// A SCRIPT LOAD lost with its connection is asked again on the next one.
TEST_F(PipelineTest, AScriptLoadLostWithItsConnectionIsAskedAgain) {
  Outcome first, second;
  submit_eval(undigested_script, "lock", "v1", 100ms, first);
  flush();
  fail_all(make_error_code(errc::connection_error), "node:7101: connection reset");
  EXPECT_EQ(first.error, make_error_code(errc::connection_error));
  submit_eval(undigested_script, "lock", "v2", 100ms, second);
  EXPECT_EQ(flush(), encode({"EVAL", undigested_script.source, "1", "lock", "v2"}) +
                         encode({"SCRIPT", "LOAD", undigested_script.source}));
}

TEST_F(PipelineTest, NoscriptResendsTheScriptAsEvalWithTheSameCallback) {
  sent_once(acquire_script);
  sent_once(release_script);
  Outcome acquire;
  submit_eval(acquire_script, "lock", "v1", 100ms, acquire);
  EXPECT_EQ(flush(), encode({"EVALSHA", acquire_script.sha1, "1", "lock", "v1"}));
  receive("-NOSCRIPT No matching script. Please use EVAL.\r\n");
  EXPECT_EQ(acquire.calls, 0) << "NOSCRIPT is not the command's answer";
  EXPECT_EQ(reloaded, std::vector<std::string>{"acquire"}) << "the observer is told which script";
  EXPECT_EQ(flush(), encode({"EVAL", acquire_script.source, "1", "lock", "v1"}));
  receive("+OK\r\n");
  EXPECT_EQ(acquire.calls, 1);
  EXPECT_FALSE(acquire.error);
  EXPECT_EQ(acquire.value, "OK");
}

TEST_F(PipelineTest, NoscriptOfAnAbandonedCommandIsDroppedNotResent) {
  sent_once(acquire_script);
  sent_once(release_script);
  Outcome acquire;
  submit_eval(acquire_script, "lock", "v1", 50ms, acquire);
  flush();
  now += 60 * ms;
  EXPECT_FALSE(check());
  receive("-NOSCRIPT No matching script.\r\n");
  EXPECT_FALSE(pipeline.has_unsent()) << "a timed-out acquire must not run later";
  EXPECT_EQ(acquire.calls, 1);
  EXPECT_EQ(pipeline.pending(), 0u);
}

// The release of a lock is queued behind its acquire; the acquire's EVALSHA meets
// NOSCRIPT. The resent acquire must run on the node before the release does, or the
// release finds nothing to delete and the acquire then leaves our value for a whole TTL.
TEST_F(PipelineTest, NoscriptResendRunsBeforeCommandsQueuedBehindIt) {
  sent_once(acquire_script);
  sent_once(release_script);
  Outcome acquire, release;
  submit_eval(acquire_script, "lock", "v1", 100ms, acquire);
  flush();
  submit_eval(release_script, "lock", "v1", 100ms, release);  // not written yet
  receive("-NOSCRIPT No matching script.\r\n");

  const std::string acquire_eval = encode({"EVAL", acquire_script.source, "1", "lock", "v1"});
  const std::string release_sha = encode({"EVALSHA", release_script.sha1, "1", "lock", "v1"});
  EXPECT_EQ(flush(), acquire_eval + release_sha);

  receive("+OK\r\n-NOSCRIPT No matching script.\r\n");
  EXPECT_EQ(acquire.calls, 1);
  EXPECT_EQ(acquire.value, "OK");
  EXPECT_EQ(flush(), encode({"EVAL", release_script.source, "1", "lock", "v1"}));
  receive(":1\r\n");
  EXPECT_EQ(release.calls, 1);
  EXPECT_EQ(release.value, "1");
  EXPECT_EQ(pipeline.pending(), 0u);
}

// Both in flight in one write, NOSCRIPT for both: each is resent, in the same order.
TEST_F(PipelineTest, NoscriptForTwoCommandsInFlightResendsThemInOrder) {
  sent_once(acquire_script);
  sent_once(release_script);
  Outcome acquire, release;
  submit_eval(acquire_script, "lock", "v1", 100ms, acquire);
  submit_eval(release_script, "lock", "v1", 100ms, release);
  flush();
  receive("-NOSCRIPT No matching script.\r\n-NOSCRIPT No matching script.\r\n");
  EXPECT_EQ(flush(), encode({"EVAL", acquire_script.source, "1", "lock", "v1"}) +
                         encode({"EVAL", release_script.source, "1", "lock", "v1"}));
  receive("+OK\r\n:1\r\n");
  EXPECT_EQ(acquire.value, "OK");
  EXPECT_EQ(release.value, "1");
}

// Retries line up in submission order, ahead of what was submitted after them.
TEST_F(PipelineTest, NoscriptRetriesKeepSubmissionOrderAmongQueuedCommands) {
  sent_once(acquire_script);
  sent_once(release_script);
  Outcome acquire, release, later;
  submit_eval(acquire_script, "lock", "v1", 100ms, acquire);
  submit_eval(release_script, "lock", "v1", 100ms, release);
  flush();
  submit({"GET", "lock"}, 100ms, later);  // not written yet
  receive("-NOSCRIPT No matching script.\r\n-NOSCRIPT No matching script.\r\n");
  EXPECT_EQ(flush(), encode({"EVAL", acquire_script.source, "1", "lock", "v1"}) +
                         encode({"EVAL", release_script.source, "1", "lock", "v1"}) +
                         encode({"GET", "lock"}));
  receive("+OK\r\n:1\r\n$-1\r\n");
  EXPECT_EQ(acquire.value, "OK");
  EXPECT_EQ(release.value, "1");
  EXPECT_EQ(later.calls, 1);
  EXPECT_FALSE(later.error);
}

// A round's command for every node: the first pipeline encodes it into the shared
// encoding, the next ones copy it (the caller vouches that it is the same command, so a
// copy is taken even of bytes that differ: that is how the test sees a copy).
TEST_F(PipelineTest, ASharedCommandIsEncodedByTheFirstPipelineAndCopiedByTheNext) {
  const std::array<std::string_view, 3> argv{"SET", "lock", "v1"};
  SharedCommand shared;
  Outcome first;
  ASSERT_FALSE(pipeline.command(argv, 100ms, record(first), now, &shared));
  EXPECT_EQ(flush(), encode({"SET", "lock", "v1"}));
  EXPECT_EQ(shared.bytes, encode({"SET", "lock", "v1"}));

  Pipeline next(options());
  Outcome second;
  shared.bytes = encode({"SET", "lock", "copied"});
  ASSERT_FALSE(next.command(argv, 100ms, record(second), now, &shared));
  EXPECT_EQ(next.take_unsent(), encode({"SET", "lock", "copied"}));

  shared.clear();
  Outcome third;
  ASSERT_FALSE(next.command(argv, 100ms, record(third), now, &shared));
  EXPECT_EQ(shared.bytes, encode({"SET", "lock", "v1"})) << "cleared: encoded afresh";
}

// An EVALSHA shared by pipelines: a pipeline that sends the script for the first time
// sends EVAL with its source and leaves the shared encoding alone; the others share the
// EVALSHA, and one of them that meets NOSCRIPT resends the copied command as EVAL.
TEST_F(PipelineTest, ASharedScriptCallIsAnEvalshaAndAFirstUseStaysAnEval) {
  const std::array<std::string_view, 1> keys{"lock"};
  const std::array<std::string_view, 1> args{"v1"};
  const std::string eval = encode({"EVAL", release_script.source, "1", "lock", "v1"});
  const std::string evalsha = encode({"EVALSHA", release_script.sha1, "1", "lock", "v1"});
  SharedCommand shared;

  Pipeline encoder(options());
  Outcome ignored, also_ignored;
  ASSERT_FALSE(encoder.eval(release_script, keys, args, 100ms, record(ignored), now, &shared));
  EXPECT_EQ(encoder.take_unsent(), eval);
  EXPECT_TRUE(shared.bytes.empty()) << "an EVAL is that connection's own";
  encoder.take_unsent().clear();
  ASSERT_FALSE(encoder.eval(release_script, keys, args, 100ms, record(also_ignored), now, &shared));
  EXPECT_EQ(shared.bytes, evalsha);

  Outcome first_use;
  ASSERT_FALSE(pipeline.eval(release_script, keys, args, 100ms, record(first_use), now, &shared));
  EXPECT_EQ(flush(), eval) << "this connection's first use is an EVAL, not the shared copy";
  receive(":1\r\n");

  Outcome copied;
  ASSERT_FALSE(pipeline.eval(release_script, keys, args, 100ms, record(copied), now, &shared));
  EXPECT_EQ(flush(), evalsha);
  // A node that lost the script: the resend is built from the copied encoding's tail.
  receive("-NOSCRIPT No matching script.\r\n");
  EXPECT_EQ(flush(), eval);
  receive(":1\r\n");
  EXPECT_EQ(copied.calls, 1);
  EXPECT_EQ(copied.value, "1");
}

// A cluster node ends a shard subscription itself when its slot moves, with the same array
// that answers a SUNSUBSCRIBE: only the oldest command in flight, a SUNSUBSCRIBE of that
// channel, takes it as its answer; the connection hands any other to its subscriber.
TEST_F(PipelineTest, ASunsubscribeAnswersOnlyAnUnsubscribeOfThatChannelInFlight) {
  EXPECT_FALSE(pipeline.awaits_sunsubscribe("{a}:released")) << "nothing in flight";
  Outcome ping;
  submit({"PING"}, 100ms, ping);
  Outcome leave;
  submit({"SUNSUBSCRIBE", "{a}:released"}, 100ms, leave);
  EXPECT_FALSE(pipeline.awaits_sunsubscribe("{a}:released")) << "not written yet";
  flush();
  EXPECT_FALSE(pipeline.awaits_sunsubscribe("{a}:released")) << "the PING is older";
  receive("+PONG\r\n");
  EXPECT_TRUE(pipeline.awaits_sunsubscribe("{a}:released"));
  EXPECT_FALSE(pipeline.awaits_sunsubscribe("{b}:released")) << "another channel's is a push";
  receive("*3\r\n$12\r\nsunsubscribe\r\n$12\r\n{a}:released\r\n:0\r\n");
  EXPECT_EQ(leave.calls, 1);
  EXPECT_FALSE(pipeline.awaits_sunsubscribe("{a}:released")) << "answered";
  // A slot reused by another command forgets the channel.
  Outcome later;
  submit({"SSUBSCRIBE", "{a}:released"}, 100ms, later);
  flush();
  EXPECT_FALSE(pipeline.awaits_sunsubscribe("{a}:released"));
}

}  // namespace
}  // namespace redlock::net
