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
  void add(double ms) {
    if (last_used_ == chunk_samples) {
      chunks_.emplace_back(chunk_samples);
      last_used_ = 0;
    }
    chunks_.back()[last_used_++] = static_cast<float>(ms);
  }
  void append(const LatencySamples& other);
  std::size_t size() const noexcept {
    return chunks_.empty() ? 0 : (chunks_.size() - 1) * chunk_samples + last_used_;
  }
  /// Bytes the samples occupy, so a report can tell the bench's own memory from the client's.
  std::size_t bytes() const noexcept { return chunks_.size() * chunk_samples * sizeof(float); }
  /// Percentiles over every sample so far (sorted into one vector once per count).
  LatencySummary summarize();

 private:
  // float: 7 significant digits are more than a microsecond-resolution timer gives, and
  // half the memory of double keeps the bench's own growth out of the RSS it reports. In
  // chunks of 256 KB, never moved: a vector that doubles frees its old storage in the
  // worker's malloc arena, between whatever else that thread allocated meanwhile (the
  // client's own objects, when a synchronous caller runs the client's loop), and the
  // holes showed in the RSS measured as the client's; a block this large is mapped on
  // its own (glibc's mmap threshold is 128 KB), apart from every arena.
  static constexpr std::size_t chunk_samples = 64 * 1024;
  std::vector<std::vector<float>> chunks_;  // each chunk_samples long
  std::size_t last_used_ = chunk_samples;
  // Every sample in one vector, made by summarize() once the run is over.
  std::vector<float> sorted_;
};

}  // namespace redlock_bench
