#pragma once
// Latency samples of one kind (successful acquires, releases, ...) and their summary as
// the redlock-bench/v1 schema has it: nearest-rank percentiles over every sample, in ms.

#include <cstddef>
#include <optional>
#include <vector>

namespace redlock_bench {

struct LatencySummary {
  std::size_t n = 0;
  // All empty when n == 0 (printed as null).
  std::optional<double> p50, p90, p99, max, mean;
};

class LatencySamples {
 public:
  void add(double ms) { samples_.push_back(static_cast<float>(ms)); }
  void append(const LatencySamples& other);
  std::size_t size() const noexcept { return samples_.size(); }
  /// Bytes the samples occupy, so a report can tell the bench's own memory from the client's.
  std::size_t bytes() const noexcept { return samples_.capacity() * sizeof(float); }
  /// Sorts the samples (once; later adds invalidate nothing but the order).
  LatencySummary summarize();

 private:
  // float: 7 significant digits are more than a microsecond-resolution timer gives, and
  // half the memory of double keeps the bench's own growth out of the RSS it reports.
  std::vector<float> samples_;
};

}  // namespace redlock_bench
