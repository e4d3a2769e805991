#include "series.hpp"

#include <sys/wait.h>

#include <cstdlib>

namespace redlock_bench {

SeriesObserver::SeriesObserver(std::chrono::milliseconds window, std::vector<std::string> nodes)
    : window_(window),
      nodes_(std::move(nodes)),
      granted_(nodes_.size()),
      errors_(nodes_.size()),
      error_texts_(nodes_.size()) {}

void SeriesObserver::start(Clock::time_point at) {
  std::lock_guard lock(mutex_);
  start_ = at;
  started_ = true;
}

long SeriesObserver::slot(Clock::time_point at) {
  if (!started_ || at < start_) return -1;
  const auto index = static_cast<std::size_t>((at - start_) / window_);
  if (index >= acquired_.size()) {
    acquired_.resize(index + 1);
    failed_.resize(index + 1);
    for (auto& member : granted_) member.resize(index + 1);
    for (auto& member : errors_) member.resize(index + 1);
  }
  return static_cast<long>(index);
}

void SeriesObserver::count_nodes(const std::vector<redlock::NodeOutcome>& nodes, long index) {
  for (std::size_t i = 0; i < nodes.size() && i < granted_.size(); ++i) {
    switch (nodes[i].status) {
      case redlock::NodeStatus::granted:
      case redlock::NodeStatus::held:
      case redlock::NodeStatus::not_held:
        // The member answered as a master holding its keys would.
        ++granted_[i][index];
        break;
      case redlock::NodeStatus::timeout:
      case redlock::NodeStatus::connection_error:
      case redlock::NodeStatus::redis_error:
        ++errors_[i][index];
        // Ports and slot numbers vary; the first words say what it was.
        ++error_texts_[i][std::string(redlock::to_string(nodes[i].status)) + ": " +
                          nodes[i].detail.substr(0, 48)];
        break;
      case redlock::NodeStatus::pending:
      case redlock::NodeStatus::cancelled:
        break;
    }
  }
}

void SeriesObserver::on_attempt(const redlock::AttemptEvent& event) {
  std::lock_guard lock(mutex_);
  const long index = slot(Clock::now());
  if (index < 0) return;
  ++(event.outcome == redlock::AttemptOutcome::acquired ? acquired_ : failed_)[index];
  count_nodes(event.nodes, index);
}

void SeriesObserver::on_lock(const redlock::LockEvent& event) {
  std::lock_guard lock(mutex_);
  const long index = slot(Clock::now());
  if (index >= 0) count_nodes(event.nodes, index);
}

void SeriesObserver::on_node(const redlock::NodeEvent& event) {
  const auto now = Clock::now();
  std::lock_guard lock(mutex_);
  if (!started_) return;
  events_.push_back({{"t_ms", ms_between(start_, now)},
                     {"node", std::string(event.node)},
                     {"kind", redlock::to_string(event.kind)},
                     {"detail", std::string(event.detail)}});
}

nlohmann::json SeriesObserver::report(Clock::time_point end) const {
  std::lock_guard lock(mutex_);
  const auto windows =
      std::min(acquired_.size(), static_cast<std::size_t>((end - start_) / window_));
  auto first = [windows](const std::vector<std::uint64_t>& all) {
    return std::vector<std::uint64_t>(
        all.begin(), all.begin() + static_cast<long>(std::min(windows, all.size())));
  };
  nlohmann::json members = nlohmann::json::array();
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    members.push_back({{"node", nodes_[i]},
                       {"granted", first(granted_[i])},
                       {"errors", first(errors_[i])},
                       {"error_texts", error_texts_[i]}});
  }
  return {{"window_ms", window_.count()},
          {"acquired", first(acquired_)},
          {"failed", first(failed_)},
          {"members", members},
          {"events", events_}};
}

FaultRunner::FaultRunner(std::string command, std::chrono::milliseconds at)
    : command_(std::move(command)), at_(at) {}

FaultRunner::~FaultRunner() {
  if (thread_.joinable()) thread_.join();
}

void FaultRunner::start(Clock::time_point window_open) {
  open_ = window_open;
  thread_ = std::thread([this] {
    std::this_thread::sleep_until(open_ + at_);
    started_ms_ = ms_between(open_, Clock::now());
    status_ = std::system(command_.c_str());
    done_ms_ = ms_between(open_, Clock::now());
  });
}

nlohmann::json FaultRunner::finish() {
  if (thread_.joinable()) thread_.join();
  return {{"command", command_},
          {"at_ms", started_ms_},
          {"done_ms", done_ms_},
          {"exit_status", status_ == -1 ? -1 : WEXITSTATUS(status_)}};
}

}  // namespace redlock_bench
