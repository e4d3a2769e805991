#include "core/election.hpp"

#include <algorithm>
#include <charconv>
#include <functional>
#include <map>

namespace redlock::core {

using std::chrono::milliseconds;

std::string format_leader_record(const LeaderRecord& record) {
  std::string text;
  text.reserve(record.value.size() + record.identity.size() + 22);
  text.append(record.value).append(" ").append(std::to_string(record.term)).append(" ");
  text.append(record.identity);
  return text;
}

std::optional<LeaderRecord> parse_leader_record(std::string_view text) {
  const auto first = text.find(' ');
  if (first == std::string_view::npos || first == 0) return std::nullopt;
  const auto second = text.find(' ', first + 1);
  if (second == std::string_view::npos) return std::nullopt;
  const std::string_view term_text = text.substr(first + 1, second - first - 1);
  LeaderRecord record;
  const auto [end, error] =
      std::from_chars(term_text.data(), term_text.data() + term_text.size(), record.term);
  if (error != std::errc() || end != term_text.data() + term_text.size() || record.term == 0) {
    return std::nullopt;
  }
  record.value = std::string(text.substr(0, first));
  record.identity = std::string(text.substr(second + 1));
  return record;
}

std::optional<LeaderView> decide_leader(const std::vector<MemberLeaderView>& members, int quorum,
                                        milliseconds elapsed, const DriftPolicy& drift_policy) {
  // At most one value can hold the key on a quorum: two quorums share a member, and a
  // member holds one value at a time.
  std::map<std::string_view, int> holders;
  for (const auto& member : members) {
    if (member.answered && !member.value.empty()) ++holders[member.value];
  }
  const auto leading = std::find_if(holders.begin(), holders.end(),
                                    [quorum](const auto& entry) { return entry.second >= quorum; });
  if (leading == holders.end()) return std::nullopt;
  const std::string_view value = leading->first;

  std::optional<LeaderRecord> record;
  std::vector<milliseconds> left;
  for (const auto& member : members) {
    if (!member.answered || member.value != value) continue;
    // A key without expiry is not one the library set; count it as holding for long.
    left.push_back(member.remaining_ttl < milliseconds(0) ? milliseconds::max()
                                                          : member.remaining_ttl);
    if (record) continue;
    auto parsed = parse_leader_record(member.record);
    if (parsed && parsed->value == value) record = std::move(parsed);
  }
  if (!record) return std::nullopt;

  // The key stays held on a quorum until the quorum-th longest TTL among its holders ends.
  std::sort(left.begin(), left.end(), std::greater<>());
  const milliseconds held_for = left[static_cast<std::size_t>(quorum) - 1];
  LeaderView view;
  view.identity = std::move(record->identity);
  view.term = record->term;
  view.value = std::string(value);
  if (held_for != milliseconds::max()) {
    const auto allowance = std::chrono::ceil<milliseconds>(drift(held_for, drift_policy));
    view.validity = std::max(milliseconds(0), held_for - elapsed - allowance);
  } else {
    view.validity = milliseconds::max();
  }
  return view;
}

bool LeaderReports::should_report(const std::optional<LeaderView>& seen) {
  if (!seen) {
    // The seat is reported empty once after a leader, and at the first read.
    const bool report = !reported_any_ || last_was_leader_;
    if (report) {
      reported_any_ = true;
      last_was_leader_ = false;
    }
    return report;
  }
  // A term already reported is reported again only after the seat was reported empty
  // (a leader that was read as gone, and is back on a quorum).
  if (seen->term < highest_term_ || (seen->term == highest_term_ && last_was_leader_)) {
    return false;
  }
  highest_term_ = seen->term;
  reported_any_ = true;
  last_was_leader_ = true;
  return true;
}

}  // namespace redlock::core
