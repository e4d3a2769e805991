#include "latency.hpp"

#include <algorithm>
#include <cmath>

namespace redlock_bench {

namespace {

double round3(double value) {
  return std::round(value * 1000.0) / 1000.0;
}

}  // namespace

void LatencySamples::append(const LatencySamples& other) {
  samples_.insert(samples_.end(), other.samples_.begin(), other.samples_.end());
}

LatencySummary LatencySamples::summarize() {
  LatencySummary summary;
  summary.n = samples_.size();
  if (samples_.empty()) return summary;
  std::sort(samples_.begin(), samples_.end());
  // Nearest rank: the smallest sample with at least p of all samples at or below it.
  auto rank = [&](double p) {
    const auto n = static_cast<double>(samples_.size());
    const auto index = static_cast<std::ptrdiff_t>(std::ceil(p * n)) - 1;
    const auto clamped = std::clamp<std::ptrdiff_t>(index, 0, std::ptrdiff_t(samples_.size()) - 1);
    return round3(samples_[static_cast<std::size_t>(clamped)]);
  };
  double sum = 0;
  for (float sample : samples_) sum += sample;
  summary.p50 = rank(0.50);
  summary.p90 = rank(0.90);
  summary.p99 = rank(0.99);
  summary.max = round3(samples_.back());
  summary.mean = round3(sum / static_cast<double>(samples_.size()));
  return summary;
}

}  // namespace redlock_bench
