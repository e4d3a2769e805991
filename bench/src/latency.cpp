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
  for (std::size_t chunk = 0; chunk < other.chunks_.size(); ++chunk) {
    const std::size_t used = chunk + 1 == other.chunks_.size() ? other.last_used_ : chunk_samples;
    for (std::size_t i = 0; i < used; ++i) add(other.chunks_[chunk][i]);
  }
}

LatencySummary LatencySamples::summarize() {
  LatencySummary summary;
  summary.n = size();
  if (summary.n == 0) return summary;
  if (sorted_.size() != summary.n) {
    sorted_.clear();
    sorted_.reserve(summary.n);
    for (std::size_t chunk = 0; chunk < chunks_.size(); ++chunk) {
      const std::size_t used = chunk + 1 == chunks_.size() ? last_used_ : chunk_samples;
      sorted_.insert(sorted_.end(), chunks_[chunk].begin(),
                     chunks_[chunk].begin() + static_cast<std::ptrdiff_t>(used));
    }
    std::sort(sorted_.begin(), sorted_.end());
  }
  // Nearest rank: the smallest sample with at least p of all samples at or below it.
  auto rank = [&](double p) {
    const auto n = static_cast<double>(sorted_.size());
    const auto index = static_cast<std::ptrdiff_t>(std::ceil(p * n)) - 1;
    const auto clamped = std::clamp<std::ptrdiff_t>(index, 0, std::ptrdiff_t(sorted_.size()) - 1);
    return round3(sorted_[static_cast<std::size_t>(clamped)]);
  };
  double sum = 0;
  for (float sample : sorted_) sum += sample;
  summary.p50 = rank(0.50);
  summary.p90 = rank(0.90);
  summary.p99 = rank(0.99);
  summary.max = round3(sorted_.back());
  summary.mean = round3(sum / static_cast<double>(sorted_.size()));
  return summary;
}

}  // namespace redlock_bench
