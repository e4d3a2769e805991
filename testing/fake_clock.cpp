#include "fake_clock.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace redlock::testing::detail {
namespace {

std::int64_t real_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::int64_t scaled(std::int64_t anchor_real_ns, std::int64_t anchor_ns, double rate,
                    std::int64_t real_ns) {
  const std::int64_t elapsed = real_ns - anchor_real_ns;
  if (rate == 1.0) return anchor_ns + elapsed;
  return anchor_ns + static_cast<std::int64_t>(static_cast<double>(elapsed) * rate);
}

}  // namespace

std::string fake_clock_library(const std::string& chosen) {
  std::string path = chosen;
  std::string from = "FleetOptions::fake_clock_library";
  if (path.empty()) {
    if (const char* env = std::getenv("REDLOCK_FAKECLOCK"); env && *env) {
      path = env;
      from = "REDLOCK_FAKECLOCK";
    } else {
      path = REDLOCK_TESTING_FAKECLOCK_INSTALLED;
      from = "the kit's install location (set REDLOCK_FAKECLOCK to its path elsewhere)";
    }
  }
  std::error_code ignored;
  if (!std::filesystem::is_regular_file(path, ignored)) {
    throw std::runtime_error("redlock::testing: the fake clock library " + path + " (from " + from +
                             ") does not exist: FleetOptions::fake_clock needs it");
  }
  return path;
}

FakeClock::FakeClock(std::string control_file) : file_(std::move(control_file)) {}

std::vector<std::string> FakeClock::environment(const std::string& library) const {
  std::string preload = "LD_PRELOAD=" + library;
  // A preload of the test's own (a profiler, say) is kept, after the clock.
  if (const char* own = std::getenv("LD_PRELOAD"); own && *own) preload += std::string(":") + own;
  return {preload, "REDLOCK_FAKECLOCK_FILE=" + file_};
}

void FakeClock::write(std::int64_t offset_ns, double rate) {
  file_offset_ns_ = offset_ns / 1'000'000 * 1'000'000;
  const std::string next = file_ + ".next";
  {
    std::ofstream out(next, std::ios::trunc);
    char rate_text[32];
    std::snprintf(rate_text, sizeof rate_text, "%.6f", rate);
    out << (offset_ns / 1'000'000) << ' ' << rate_text << '\n';
    if (!out) throw std::runtime_error("redlock::testing: cannot write " + next);
  }
  // A rename, never a rewrite in place: the library tells versions apart by inode.
  if (std::rename(next.c_str(), file_.c_str()) != 0) {
    throw std::runtime_error("redlock::testing: rename to " + file_ + ": " + std::strerror(errno));
  }
}

void FakeClock::set(std::chrono::milliseconds offset, double rate) {
  if (!(rate > 0.0) || !std::isfinite(rate)) {
    throw std::invalid_argument("redlock::testing: a clock rate must be positive, not " +
                                std::to_string(rate));
  }
  const std::int64_t now = real_now_ns();
  const std::int64_t reading = scaled(anchor_real_ns_, anchor_ns_, rate_, now);
  previous_rate_ = rate_;
  anchor_real_ns_ = now;
  anchor_ns_ = reading;
  rate_ = rate;
  target_real_ns_ = now;
  target_offset_ns_ = std::chrono::duration_cast<std::chrono::nanoseconds>(offset).count();
  target_rate_ = rate;
  write(now + target_offset_ns_ - reading, rate);
}

std::int64_t FakeClock::expected(std::int64_t real_ns) const {
  return scaled(target_real_ns_, target_real_ns_ + target_offset_ns_, target_rate_, real_ns);
}

std::int64_t FakeClock::tolerance_ns() const {
  return 50'000'000 +
         static_cast<std::int64_t>(20'000'000 * std::fabs(target_rate_ - previous_rate_));
}

bool FakeClock::real() const {
  return target_offset_ns_ == 0 && target_rate_ == 1.0;
}

void FakeClock::calibrate(std::int64_t real_ns, std::int64_t reading_ns) {
  anchor_real_ns_ = real_ns;
  anchor_ns_ = reading_ns - file_offset_ns_;
}

void FakeClock::correct(std::int64_t error_ns) {
  write(file_offset_ns_ - error_ns, target_rate_);
}

void FakeClock::stopping() {
  std::error_code ignored;
  std::filesystem::remove(file_, ignored);
}

void FakeClock::started() {
  file_offset_ns_ = 0;
  anchor_real_ns_ = 0;
  anchor_ns_ = 0;
  rate_ = 1.0;
  previous_rate_ = 1.0;
  if (real()) return;
  const std::int64_t now = real_now_ns();
  anchor_real_ns_ = now;
  anchor_ns_ = now;
  rate_ = target_rate_;
  write(expected(now) - now, target_rate_);
}

}  // namespace redlock::testing::detail
