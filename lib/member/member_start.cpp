#include "member/member_start.hpp"

#include <hiredis/hiredis.h>

#include <algorithm>
#include <array>
#include <charconv>

namespace redlock::detail {

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

std::string seconds_text(std::chrono::milliseconds span) {
  return std::to_string(span.count()) + " ms";
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

void ServerRegistry::leave(MemberStart& start) {
  std::erase(starts_, &start);
  judge();
}

void ServerRegistry::judge() {
  for (auto* start : starts_) {
    const MemberStart* first = nullptr;
    if (start->learned_at_ != 0) {
      for (const auto* other : starts_) {
        if (other->rules_.member == start->rules_.member || other->learned_at_ == 0 ||
            other->learned_at_ > start->learned_at_ ||
            other->last_->run_id != start->last_->run_id) {
          continue;
        }
        if (first == nullptr || other->learned_at_ < first->learned_at_) first = other;
      }
    }
    start->same_server_as(first);
  }
}

MemberStart::MemberStart(Rules rules) : rules_(std::move(rules)) {
  // Met for the first time with the young-member rule on: unknown until it says its age.
  guard_.known = !rules_.first_contact;
  if (rules_.registry) rules_.registry->enter(*this);
}

MemberStart::~MemberStart() {
  if (rules_.registry) rules_.registry->leave(*this);
}

void MemberStart::same_server_as(const MemberStart* other) {
  if (other == nullptr) {
    guard_.same_server_as.clear();
    return;
  }
  guard_.same_server_as = other->rules_.url;
  if (same_server_told_ == other->rules_.url) return;
  same_server_told_ = other->rules_.url;
  if (rules_.on_misconfigured) {
    rules_.on_misconfigured(rules_.who + "the same server (run_id " + last_->run_id + ") as " +
                            other->rules_.url +
                            ": one server must not vote twice, so this member does not count; "
                            "name each server once in the nodes");
  }
}

void MemberStart::connected(core::Clock::time_point now) {
  connected_at_ = now;
  if (met_ ? rules_.observed : rules_.first_contact) guard_.known = false;
}

void MemberStart::appeared(core::Clock::time_point now) {
  connected_at_ = now;
  if (!rules_.observed) return;
  appeared_ = true;
  guard_.known = false;
}

void MemberStart::learned(const ServerIdentity& identity, core::Clock::time_point now) {
  guard_.known = true;
  if (!met_ && appeared_) {
    guard_from(connected_at_,
               "became a master after this client met the member: a promoted replica may lack "
               "writes the member granted",
               now);
  } else if (!met_) {
    // A freshly started fleet and one that lost its keys look the same from here: only
    // the opt-in rule takes a young member for one that may have lost keys.
    if (rules_.first_contact && identity.master_for && *identity.master_for < identity.uptime &&
        *identity.master_for < bound()) {
      guard_from(now - *identity.master_for,
                 "the group's master for only " + std::to_string(identity.master_for->count()) +
                     " ms when first met (its sentinel's role-reported-time): a promoted "
                     "replica may lack writes the group granted",
                 now);
    } else if (rules_.first_contact && identity.uptime < bound()) {
      guard_from(now - identity.uptime,
                 "up for only " + std::to_string(identity.uptime.count()) +
                     " s when first met: it may have restarted without its keys",
                 now);
    }
  } else if (!last_) {
    // The INFO before was refused: whether the server changed since is unknown.
    if (rules_.observed) {
      guard_from(connected_at_,
                 "INFO refused on the connection before, so a restart cannot be ruled out: "
                 "taken as restarted",
                 now);
    }
  } else if (rules_.observed && identity.run_id != last_->run_id) {
    // A replica promoted in the member's place carries its old master's replication id as
    // its second one: said apart from a restart, so an operator looks at replication.
    const bool promoted =
        !last_->master_replid.empty() && identity.master_replid2 == last_->master_replid;
    guard_from(connected_at_,
               promoted ? "run_id changed across a reconnect to a promoted replica: writes "
                          "it had not received are lost"
                        : "run_id changed across a reconnect: restarted, keys may be lost",
               now);
  } else if (rules_.observed && identity.master_replid != last_->master_replid) {
    guard_from(connected_at_,
               "replication id changed across a reconnect: failed over, keys may be lost", now);
  }
  met_ = true;
  const bool same = last_ && learned_at_ != 0 && last_->run_id == identity.run_id;
  last_ = identity;
  if (rules_.registry) {
    if (!same) learned_at_ = rules_.registry->next_sequence();
    rules_.registry->judge();
  }
}

void MemberStart::unanswered(core::Clock::time_point now) {
  guard_.known = true;
  if (met_ || appeared_ ? rules_.observed : rules_.first_contact) {
    guard_from(connected_at_, "INFO refused, so its start is unknown: taken as restarted", now);
  }
  met_ = true;
  last_.reset();
  learned_at_ = 0;
  if (rules_.registry) rules_.registry->judge();
  if (!refusal_told_ && rules_.any()) {
    refusal_told_ = true;
    if (rules_.on_misconfigured) {
      rules_.on_misconfigured(
          rules_.who +
          "INFO refused or unreadable: a restart cannot be told from a reconnect, so every "
          "reconnect is taken for one and guarded (grant the user +info)");
    }
  }
}

void MemberStart::guard_from(core::Clock::time_point start, std::string reason,
                             core::Clock::time_point now) {
  const auto until = start + bound();
  if (until <= guard().until) return;
  guard_.until = until;
  guard_start_ = start;
  guard_.reason = rules_.who + reason;
  if (until > now && rules_.on_guarded) {
    rules_.on_guarded(std::chrono::ceil<std::chrono::milliseconds>(until - now), guard_.reason);
  }
}

const core::MemberGuard& MemberStart::guard() const noexcept {
  if (guard_start_) guard_.until = std::max(guard_.until, *guard_start_ + bound());
  return guard_;
}

std::chrono::milliseconds MemberStart::bound() const noexcept {
  return std::chrono::milliseconds(rules_.bound ? rules_.bound->load(std::memory_order_relaxed)
                                                : 30'000);
}

void MemberWatch::ask(net::Connection& connection) {
  if (asking_ || !start_.rules().any()) return;
  asking_ = true;
  const std::array<std::string_view, 1> info{"INFO"};
  connection.command(info, timeout_, [this, &connection](const net::ReplyView& view) {
    asking_ = false;
    // A dropped connection says nothing of the server: the next one asks again.
    if (view.error == errc::connection_error || view.error == errc::cancelled) {
      silent_ = true;
      return;
    }
    if (view.error == errc::timeout) {
      silent_ = true;
      return ask(connection);
    }
    silent_ = false;
    const redisReply* reply = view.error ? nullptr : view.reply;
    std::optional<ServerIdentity> identity;
    if (reply != nullptr && reply->type == REDIS_REPLY_STRING) {
      identity = parse_server_identity({reply->str, reply->len});
    }
    if (identity) {
      identity->master_for = connection.master_role_age();
      start_.learned(*identity, core::Clock::now());
    } else {
      start_.unanswered(core::Clock::now());
    }
  });
}

void MemberWatch::ready(net::Connection& connection) {
  if (!start_.rules().any()) return;
  silent_ = false;
  start_.connected(core::Clock::now());
  ask(connection);
}

void MemberWatch::appeared(net::Connection& connection) {
  if (!start_.rules().any()) return;
  silent_ = false;
  start_.appeared(core::Clock::now());
  ask(connection);
}

std::string guarded_detail(const core::MemberGuard& guard, core::Clock::time_point now) {
  if (!guard.known) return "not counted: the server has not said yet who it is";
  if (!guard.same_server_as.empty()) {
    return "not counted: the same server as " + guard.same_server_as +
           ", which counts for it (two URLs naming one server)";
  }
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(guard.until - now);
  return "not counted: guarded for another " + seconds_text(left) + " (" + guard.reason + ")";
}

}  // namespace redlock::detail
