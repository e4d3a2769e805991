#include "client/operations/election_record.hpp"

#include <hiredis/hiredis.h>

#include <algorithm>
#include <array>
#include <utility>

#include "client/engine/engine.hpp"
#include "client/rounds/round.hpp"
#include "client/util/messages.hpp"
#include "scripts/election_scripts.hpp"
#include "scripts/lock_scripts.hpp"

namespace redlock::detail {

using std::chrono::milliseconds;

namespace {

NodeReply interpret_proclaim(const redisReply* reply, std::string_view where) {
  NodeReply result;
  if (reply->type == REDIS_REPLY_INTEGER && reply->integer == 1) {
    result.status = NodeStatus::granted;
  } else if (reply->type == REDIS_REPLY_INTEGER && reply->integer == 0) {
    result.status = NodeStatus::not_held;
  } else {
    result = unexpected_reply_to("the proclaim script", reply, where);
  }
  return result;
}

// held: holder and remaining_ttl set, the record carried in `detail` (taken out before
// the round sees the reply); not_held: the key is free there, a record perhaps left.
NodeReply interpret_leader_read(const redisReply* reply, std::string_view where) {
  if (reply->type != REDIS_REPLY_ARRAY || reply->elements < 2 ||
      reply->element[0]->type != REDIS_REPLY_INTEGER) {
    return unexpected_reply_to("the leader_read script", reply, where);
  }
  if (reply->element[0]->integer == -3 && reply->element[1]->type == REDIS_REPLY_STRING) {
    return wrong_kind_reply({reply->element[1]->str, reply->element[1]->len});
  }
  if (reply->elements != 3 || reply->element[1]->type != REDIS_REPLY_STRING ||
      reply->element[2]->type != REDIS_REPLY_STRING) {
    return unexpected_reply_to("the leader_read script", reply, where);
  }
  NodeReply result;
  result.holder.assign(reply->element[1]->str, reply->element[1]->len);
  result.status = result.holder.empty() ? NodeStatus::not_held : NodeStatus::held;
  result.remaining_ttl = milliseconds(reply->element[0]->integer);
  result.detail.assign(reply->element[2]->str, reply->element[2]->len);
  return result;
}

std::size_t index_of(std::vector<std::unique_ptr<Node>>& nodes, const Node& node) {
  return static_cast<std::size_t>(
      std::find_if(nodes.begin(), nodes.end(),
                   [&](const std::unique_ptr<Node>& each) { return each.get() == &node; }) -
      nodes.begin());
}

}  // namespace

void start_proclaim(const std::shared_ptr<Engine>& engine, std::string key, std::string value,
                    std::string record, milliseconds node_timeout,
                    std::function<void(Result<void>)> done) {
  std::string what = "proclaim " + quote_key(key);
  if (!engine->accepting()) return done(cancelled_error(what));
  run_round(
      *engine,
      [&](Node& node, NodeCallback reply) {
        const std::string record_key = node.companion_key(key, scripts::leader_suffix);
        const std::string channel = node.companion_key(key, scripts::released_suffix);
        const std::array<std::string_view, 2> keys{key, record_key};
        const std::array<std::string_view, 4> args{value, record, channel,
                                                   node.announce_argument(Announce::yes)};
        node.run({.script = &scripts::proclaim(),
                  .keys = keys,
                  .args = args,
                  .read = interpret_proclaim},
                 node_timeout, std::move(reply));
      },
      vote_owner_action,
      [engine, what = std::move(what), done = std::move(done)](RoundResult& round) {
        if (round.cancelled && !engine->open()) return done(cancelled_error(what));
        if (round.reached()) return done({});
        const auto code = round.failure == core::FailureKind::contention ? errc::not_held
                                                                         : errc::quorum_unreachable;
        done(Error(make_error_code(code), what + ": " + round.summary("wrote the record"),
                   round.outcomes));
      });
}

void start_leader_read(const std::shared_ptr<Engine>& engine, std::string key,
                       milliseconds node_timeout,
                       std::function<void(Result<std::vector<core::MemberLeaderView>>)> done) {
  auto& nodes = engine->nodes();
  // The round keeps each member's outcome; the records are kept here, by member.
  auto records = std::make_shared<std::vector<std::string>>(nodes.size());
  run_round(
      *engine,
      [&](Node& node, NodeCallback reply) {
        const auto index = index_of(nodes, node);
        const std::string record_key = node.companion_key(key, scripts::leader_suffix);
        const std::array<std::string_view, 2> keys{key, record_key};
        node.run({.script = &scripts::leader_read(), .keys = keys, .read = interpret_leader_read},
                 node_timeout, [records, index, reply = std::move(reply)](NodeReply answer) {
                   if (answer.status == NodeStatus::held || answer.status == NodeStatus::not_held) {
                     (*records)[index] = std::move(answer.detail);
                     answer.detail.clear();
                   }
                   reply(std::move(answer));
                 });
      },
      vote_owner_action,
      [engine, records, key, done = std::move(done)](RoundResult& round) {
        const std::string what = "leader of " + quote_key(key);
        if (round.cancelled && !engine->open()) return done(cancelled_error(what));
        std::vector<core::MemberLeaderView> members(round.outcomes.size());
        int answered = 0;
        for (std::size_t i = 0; i < members.size(); ++i) {
          const auto& outcome = round.outcomes[i];
          if (outcome.status == NodeStatus::redis_error &&
              outcome.error == make_error_code(errc::wrong_kind)) {
            return done(Error(outcome.error, what + ": " + describe(outcome), round.outcomes));
          }
          auto& member = members[i];
          member.answered =
              outcome.status == NodeStatus::held || outcome.status == NodeStatus::not_held;
          if (!member.answered) continue;
          ++answered;
          member.value = outcome.holder;
          member.remaining_ttl = outcome.remaining_ttl;
          member.record = std::move((*records)[i]);
        }
        if (answered < engine->quorum()) {
          return done(Error(make_error_code(errc::quorum_unreachable),
                            what + ": " + std::to_string(answered) + " of " +
                                std::to_string(members.size()) + " members answered (quorum " +
                                std::to_string(engine->quorum()) + ")",
                            round.outcomes));
        }
        done(std::move(members));
      },
      {.wait_for_all = true});
}

}  // namespace redlock::detail
