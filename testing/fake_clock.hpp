#pragma once
// The wall clock of one member under the fake clock (libredlock_fakeclock.so, preloaded):
// the control file it re-reads, and what the member's clock should read.
//
// The library continues a new rate from its own current reading and adds the file's
// offset to that, so the file's contents depend on what came before. This class keeps the
// library's state alongside it, so that set() means one thing whatever came before: from
// now on the clock reads the real time plus `offset` now, running at `rate`.

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace redlock::testing::detail {

/// The fake clock library to preload: `chosen` when not empty, else $REDLOCK_FAKECLOCK,
/// else the one installed with the kit. Throws std::runtime_error naming where it looked
/// when that file does not exist.
std::string fake_clock_library(const std::string& chosen);

class FakeClock {
 public:
  /// `control_file` does not exist yet: the clock is real.
  explicit FakeClock(std::string control_file);

  /// What to add to the environment of a process that follows this clock.
  std::vector<std::string> environment(const std::string& library) const;
  /// Rewrites the control file (by rename) for: reads real + `offset` now, runs at `rate`.
  void set(std::chrono::milliseconds offset, double rate);
  /// What the clock should read, in ns since the epoch, at the real time `real_ns`.
  std::int64_t expected(std::int64_t real_ns) const;
  /// How far a reading may be from expected(): the library notices a new file up to
  /// 10 ms late, and runs at the old rate meanwhile.
  std::int64_t tolerance_ns() const;
  /// Whether the clock reads the real time.
  bool real() const;
  /// The process's clock read `reading_ns` at the real time `real_ns`: what the library
  /// holds, which the next set() continues from. The library applies a new file up to
  /// 10 ms after it was written, so its own reading drifts from one kept here alone by
  /// that time the old and new rates apart.
  void calibrate(std::int64_t real_ns, std::int64_t reading_ns);
  /// The process's clock settled `error_ns` away from expected(): it applied the new file
  /// later than written, from where its old rate had taken it by then. Moves the offset by
  /// that much; a rewrite keeps the rate continuous, so only the offset changes.
  void correct(std::int64_t error_ns);

  /// The process is about to start again: it will start from the real clock, so the file
  /// goes until started() writes it again.
  void stopping();
  /// The process started (reading the real clock): the clock set last applies again.
  void started();

 private:
  void write(std::int64_t offset_ns, double rate);

  std::string file_;
  // The library's own reading without its offset: anchor_ns at anchor_real_ns, then `rate`.
  std::int64_t anchor_real_ns_ = 0;
  std::int64_t anchor_ns_ = 0;
  double rate_ = 1.0;
  // The offset the file holds, as the library reads it (whole milliseconds).
  std::int64_t file_offset_ns_ = 0;
  // What set() asked for: target_ns + offset at target_real_ns, then target_rate_.
  std::int64_t target_real_ns_ = 0;
  std::int64_t target_offset_ns_ = 0;
  double target_rate_ = 1.0;
  double previous_rate_ = 1.0;
};

}  // namespace redlock::testing::detail
