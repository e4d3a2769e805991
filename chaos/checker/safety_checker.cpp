#include "checker/safety_checker.hpp"

#include <algorithm>
#include <set>
#include <utility>

#include "checker/event_json.hpp"

namespace redlock::chaos {
namespace {

constexpr std::size_t max_malformed_text = 200;

template <typename... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <typename... F>
Overloaded(F...) -> Overloaded<F...>;

bool empty(const HoldEvent& hold) {
  return hold.end_ns <= hold.start_ns;
}

// A key set is a hold of each of its keys, judged with that key's other holds.
std::vector<HoldEvent> per_key(const std::vector<HoldEvent>& holds) {
  std::vector<HoldEvent> out;
  out.reserve(holds.size());
  for (const HoldEvent& hold : holds) {
    if (hold.keys.empty()) {
      out.push_back(hold);
      continue;
    }
    for (const std::string& key : hold.keys) {
      out.push_back(hold);
      out.back().key = key;
    }
  }
  return out;
}

// Segments of one lock (same key and value) become one interval covering them all.
std::map<std::string, std::vector<HoldEvent>> locks_by_key(const std::vector<HoldEvent>& holds) {
  std::map<std::string, std::vector<HoldEvent>> by_key;
  std::map<std::pair<std::string, std::string>, std::size_t> index;  // (key, value) -> slot
  for (const HoldEvent& hold : per_key(holds)) {
    auto& locks = by_key[hold.key];
    if (hold.value.empty()) {
      locks.push_back(hold);
      continue;
    }
    auto [it, inserted] = index.try_emplace({hold.key, hold.value}, locks.size());
    if (inserted) {
      locks.push_back(hold);
      continue;
    }
    HoldEvent& lock = locks[it->second];
    lock.start_ns = std::min(lock.start_ns, hold.start_ns);
    lock.end_ns = std::max(lock.end_ns, hold.end_ns);
    if (!lock.token) lock.token = hold.token;
  }
  return by_key;
}

}  // namespace

void SafetyChecker::add(const Event& event) {
  std::visit(Overloaded{
                 [this](const HoldEvent& hold) {
                   ++counts_.holds;
                   holds_.push_back(hold);
                 },
                 [this](const WriteEvent& write) {
                   if (write.accepted) {
                     ++counts_.writes_accepted;
                   } else if (write.stale) {
                     ++counts_.stale_writes_rejected;
                   } else {
                     ++counts_.writes_failed;
                   }
                   writes_.push_back(write);
                 },
                 [this](const AttemptEvent& attempt) {
                   switch (attempt.result) {
                     case AttemptResult::acquired:
                       ++counts_.acquisitions;
                       ++counts_.acquisitions_by_primitive[std::string(name(attempt.primitive))];
                       break;
                     case AttemptResult::conflict:
                       ++counts_.conflicts;
                       break;
                     case AttemptResult::error:
                       ++counts_.errors;
                       ++counts_.error_codes[attempt.code];
                       break;
                   }
                 },
             },
             event);
}

void SafetyChecker::add_line(std::string_view line) {
  ParsedLine parsed = parse_event_line(line);
  if (auto* event = std::get_if<Event>(&parsed)) {
    add(*event);
  } else if (auto* why = std::get_if<std::string>(&parsed)) {
    ++counts_.malformed_lines;
    if (counts_.malformed_examples.size() < max_examples_) {
      counts_.malformed_examples.push_back(*why + ": " +
                                           std::string(line.substr(0, max_malformed_text)));
    }
  } else if (line.find_first_not_of(" \t\r\n") != std::string_view::npos) {
    ++counts_.ignored_records;
  }
}

SafetyReport SafetyChecker::report() const {
  SafetyReport report = counts_;

  for (auto& [key, locks] : locks_by_key(holds_)) {
    report.locks += locks.size();
    // Ties in start time go lowest token first, so that they never count as regressions.
    std::stable_sort(locks.begin(), locks.end(), [](const HoldEvent& a, const HoldEvent& b) {
      if (a.start_ns != b.start_ns) return a.start_ns < b.start_ns;
      return a.token.value_or(0) < b.token.value_or(0);
    });

    // Sweep in start order over the locks still valid: each one still valid when a lock
    // starts overlaps it (it started no later and ends after this start), so judging
    // every start against what is live then judges every instant.
    std::multiset<std::pair<std::int64_t, std::size_t>> valid;  // (end_ns, index)
    for (std::size_t i = 0; i < locks.size(); ++i) {
      const HoldEvent& lock = locks[i];
      if (empty(lock)) {
        ++report.empty_holds;
        continue;
      }
      while (!valid.empty() && valid.begin()->first <= lock.start_ns) valid.erase(valid.begin());
      std::uint64_t found = 0;
      std::vector<const HoldEvent*> permits;
      for (const auto& [end, index] : valid) {
        const HoldEvent& live = locks[index];
        if (may_share(live.primitive, lock.primitive)) {
          if (live.primitive == Primitive::permit) permits.push_back(&live);
          continue;
        }
        ++found;
        if (report.overlap_examples.size() < max_examples_) {
          report.overlap_examples.push_back({live, lock});
        }
      }
      if (lock.primitive == Primitive::permit &&
          permits.size() >= static_cast<std::size_t>(std::max(lock.permits, 0))) {
        ++found;
        if (report.excess_permit_examples.size() < max_examples_) {
          ExcessPermit excess{lock, {}};
          for (const HoldEvent* holder : permits) excess.holders.push_back(*holder);
          report.excess_permit_examples.push_back(std::move(excess));
        }
      }
      if (found > 0) {
        report.violations += found;
        report.violations_by_primitive[std::string(name(lock.primitive))] += found;
      }
      valid.emplace(lock.end_ns, i);
    }

    const HoldEvent* highest = nullptr;
    for (const HoldEvent& lock : locks) {
      if (!lock.token) continue;
      if (highest && *lock.token <= *highest->token) {
        ++report.token_regressions;
        if (report.regression_examples.size() < max_examples_) {
          report.regression_examples.push_back({*highest, lock});
        }
      } else {
        highest = &lock;
      }
    }
  }

  std::map<std::string, std::vector<const WriteEvent*>> accepted;
  for (const WriteEvent& write : writes_) {
    if (write.accepted) accepted[write.key].push_back(&write);
  }
  for (auto& [key, by_start] : accepted) {
    std::vector<const WriteEvent*> by_end = by_start;
    std::sort(by_start.begin(), by_start.end(),
              [](auto* a, auto* b) { return a->start_ns < b->start_ns; });
    std::sort(by_end.begin(), by_end.end(), [](auto* a, auto* b) { return a->end_ns < b->end_ns; });
    // The highest token among writes answered before the current one was sent.
    const WriteEvent* highest = nullptr;
    std::size_t answered = 0;
    for (const WriteEvent* write : by_start) {
      while (answered < by_end.size() && by_end[answered]->end_ns < write->start_ns) {
        if (!highest || by_end[answered]->token > highest->token) highest = by_end[answered];
        ++answered;
      }
      if (highest && highest->token > write->token) {
        ++report.stale_writes_accepted;
        if (report.stale_write_examples.size() < max_examples_) {
          report.stale_write_examples.push_back({*highest, *write});
        }
      }
    }
  }
  return report;
}

}  // namespace redlock::chaos
