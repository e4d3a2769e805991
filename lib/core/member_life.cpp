#include "core/member_life.hpp"

#include <algorithm>

namespace redlock::core {

void ServerRegistry::leave(MemberLife& life) {
  std::erase(lives_, &life);
  judge();
}

void ServerRegistry::judge() {
  for (auto* life : lives_) {
    const MemberLife* first = nullptr;
    if (life->learned_at_ != 0) {
      for (const auto* other : lives_) {
        if (other->rules_.member == life->rules_.member || other->learned_at_ == 0 ||
            other->learned_at_ > life->learned_at_ || other->last_->run_id != life->last_->run_id) {
          continue;
        }
        if (first == nullptr || other->learned_at_ < first->learned_at_) first = other;
      }
    }
    life->same_server_as(first);
  }
}

MemberLife::MemberLife(Rules rules) : rules_(std::move(rules)) {
  // Met for the first time with the young-member rule on: unknown until it says its age.
  guard_.known = !rules_.first_contact;
  if (rules_.registry) rules_.registry->enter(*this);
}

MemberLife::~MemberLife() {
  if (rules_.registry) rules_.registry->leave(*this);
}

void MemberLife::same_server_as(const MemberLife* other) {
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

void MemberLife::connected(Clock::time_point now) {
  connected_at_ = now;
  silent_ = false;
  if (met_ ? rules_.observed : rules_.first_contact) guard_.known = false;
}

void MemberLife::appeared(Clock::time_point now) {
  connected_at_ = now;
  silent_ = false;
  if (!rules_.observed) return;
  appeared_ = true;
  guard_.known = false;
}

void MemberLife::learned(const ServerIdentity& identity, Clock::time_point now) {
  silent_ = false;
  guard_.known = true;
  if (!met_ && appeared_) {
    guard_from(connection_start(now),
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
      guard_from(connection_start(now),
                 "INFO refused on the connection before, so a restart cannot be ruled out: "
                 "taken as restarted",
                 now);
    }
  } else if (rules_.observed && identity.run_id != last_->run_id) {
    // A replica promoted in the member's place carries its old master's replication id as
    // its second one: said apart from a restart, so an operator looks at replication.
    const bool promoted =
        !last_->master_replid.empty() && identity.master_replid2 == last_->master_replid;
    guard_from(connection_start(now),
               promoted ? "run_id changed across a reconnect to a promoted replica: writes "
                          "it had not received are lost"
                        : "run_id changed across a reconnect: restarted, keys may be lost",
               now);
  } else if (rules_.observed && identity.master_replid != last_->master_replid) {
    guard_from(connection_start(now),
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

void MemberLife::refused(Clock::time_point now) {
  silent_ = false;
  guard_.known = true;
  if (met_ || appeared_ ? rules_.observed : rules_.first_contact) {
    guard_from(connection_start(now), "INFO refused, so its start is unknown: taken as restarted",
               now);
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

void MemberLife::guard_from(Clock::time_point start, std::string reason, Clock::time_point now) {
  const auto until = start + bound();
  if (until <= guard().until) return;
  guard_.until = until;
  guard_start_ = start;
  guard_.reason = rules_.who + reason;
  if (until > now && rules_.on_guarded) {
    rules_.on_guarded(std::chrono::ceil<std::chrono::milliseconds>(until - now), guard_.reason);
  }
}

Clock::time_point MemberLife::connection_start(Clock::time_point now) const noexcept {
  return connected_at_.value_or(now);
}

const MemberGuard& MemberLife::guard() const noexcept {
  if (guard_start_) guard_.until = std::max(guard_.until, *guard_start_ + bound());
  return guard_;
}

std::chrono::milliseconds MemberLife::bound() const noexcept {
  return std::chrono::milliseconds(rules_.bound ? rules_.bound->load(std::memory_order_relaxed)
                                                : 30'000);
}

}  // namespace redlock::core
