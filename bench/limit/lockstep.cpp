#include "lockstep.hpp"

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace redlock_limit {

Lockstep::Lockstep(std::vector<RawNode>& nodes, std::chrono::milliseconds timeout)
    : nodes_(nodes), timeout_ms_(static_cast<int>(timeout.count())) {}

const PhaseResult& Lockstep::run(std::string_view commands, std::size_t count, std::size_t needed) {
  const std::size_t n = nodes_.size();
  result_.decided_ms.assign(count, -1.0);
  result_.granted = 0;
  result_.errors = 0;
  grants_.assign(count, 0);
  answered_.assign(n, 0);

  const auto start = Clock::now();
  for (auto& node : nodes_) node.send(commands);

  auto& waiting = waiting_;
  auto& waiting_node = waiting_node_;
  std::size_t done = 0;
  while (done < n) {
    waiting.clear();
    waiting_node.clear();
    for (std::size_t i = 0; i < n; ++i) {
      if (answered_[i] < count) {
        waiting.push_back({nodes_[i].fd(), POLLIN, 0});
        waiting_node.push_back(i);
      }
    }
    const int ready = ::poll(waiting.data(), waiting.size(), timeout_ms_);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
    if (ready == 0) {
      throw std::runtime_error(nodes_[waiting_node.front()].name() + ": did not answer in " +
                               std::to_string(timeout_ms_) + " ms");
    }
    // One time stamp for everything read after this wakeup: the replies were all there
    // by then, and reading the clock per reply would only add to the client's cost.
    const double now_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    for (std::size_t w = 0; w < waiting.size(); ++w) {
      if (waiting[w].revents == 0) continue;
      const std::size_t i = waiting_node[w];
      RawNode& node = nodes_[i];
      node.receive();
      verdicts_.clear();
      node.consume(scan_replies(node.pending(), verdicts_));
      for (const Verdict verdict : verdicts_) {
        const std::size_t cycle = answered_[i]++;
        if (cycle >= count) throw std::runtime_error(node.name() + ": more replies than commands");
        if (verdict == Verdict::error) ++result_.errors;
        if (verdict != Verdict::granted) continue;
        ++result_.granted;
        if (++grants_[cycle] == needed) result_.decided_ms[cycle] = now_ms;
      }
      if (answered_[i] == count) {
        ++done;
        result_.all_answered_ms = now_ms;
      }
    }
  }
  return result_;
}

}  // namespace redlock_limit
