#include "runner/run_progress.hpp"

namespace redlock::chaos {

namespace {

// Starting five nodes, and later stopping them and reading every worker's records,
// takes a few seconds on a quiet machine; the first estimate uses that.
constexpr std::chrono::milliseconds first_guess_overhead{5'000};

}  // namespace

RunProgress::RunProgress(std::size_t scenarios, std::chrono::milliseconds duration)
    : scenarios_(scenarios), duration_(duration) {}

std::string RunProgress::starting(const std::string& name) {
  ++started_;
  const auto each =
      finished_ > 0 ? took_ / static_cast<long>(finished_) : duration_ + first_guess_overhead;
  const auto left = each * static_cast<long>(scenarios_ - started_ + 1);
  return "scenario " + std::to_string(started_) + "/" + std::to_string(scenarios_) + " " + name +
         " (" + human_duration(duration_) + ", about " + human_duration(left) + " left)";
}

void RunProgress::finished(std::chrono::milliseconds took) {
  ++finished_;
  took_ += took;
}

std::string human_duration(std::chrono::milliseconds duration) {
  const long seconds = static_cast<long>((duration.count() + 500) / 1000);
  if (seconds < 60) return std::to_string(seconds) + " s";
  if (seconds < 3600) {
    return std::to_string(seconds / 60) + " min " + std::to_string(seconds % 60) + " s";
  }
  return std::to_string(seconds / 3600) + " h " + std::to_string(seconds % 3600 / 60) + " min";
}

}  // namespace redlock::chaos
