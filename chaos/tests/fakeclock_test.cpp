// libredlock_fakeclock.so: a probe process shows what each clock reads under it, then a
// real redis-server under it forgets keys early when its wall clock jumps or runs fast.

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/redis_server.hpp"

namespace redlock::chaos {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr long long ms = 1'000'000;  // nanoseconds

long long now_ns(clockid_t id) {
  timespec ts{};
  ::clock_gettime(id, &ts);
  return static_cast<long long>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// The control file, rewritten the way the library asks: a new file renamed over it.
class ControlFile {
 public:
  ControlFile() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "redlock-clock-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp");
    dir_ = pattern;
  }
  ~ControlFile() {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  std::string path() const { return dir_ + "/clock"; }
  void write(const std::string& text) {
    const std::string tmp = path() + ".tmp";
    std::ofstream(tmp) << text << "\n";
    std::filesystem::rename(tmp, path());
  }

 private:
  std::string dir_;
};

struct Sample {
  long long mono = 0, real = 0, coarse = 0, tod_us = 0, time_s = 0;
};

std::vector<Sample> run_probe(const std::string& control_path, int sleep_ms) {
  const std::string command =
      "LD_PRELOAD='" REDLOCK_FAKECLOCK_LIBRARY "' REDLOCK_FAKECLOCK_FILE='" + control_path +
      "' '" REDLOCK_FAKECLOCK_PROBE "' " + std::to_string(sleep_ms);
  FILE* out = ::popen(command.c_str(), "r");
  if (!out) throw std::runtime_error("popen");
  std::string text;
  char buffer[256];
  while (std::fgets(buffer, sizeof buffer, out)) text += buffer;
  EXPECT_EQ(::pclose(out), 0) << text;
  std::istringstream in(text);
  std::vector<Sample> samples;
  Sample s;
  while (in >> s.mono >> s.real >> s.coarse >> s.tod_us >> s.time_s) samples.push_back(s);
  EXPECT_EQ(samples.size(), 2u) << text;
  samples.resize(2);
  return samples;
}

// Every wall clock of `s` reads within [low, high] ns (time() to the second).
void expect_wall_clocks_within(const Sample& s, long long low, long long high) {
  EXPECT_GE(s.real, low);
  EXPECT_LE(s.real, high);
  // The coarse clock lags by up to a tick (4 ms at HZ=250), and a rate scales the lag.
  EXPECT_GE(s.coarse, low - 50 * ms);
  EXPECT_LE(s.coarse, high);
  EXPECT_GE(s.tod_us * 1000, low - 1000);
  EXPECT_LE(s.tod_us * 1000, high);
  EXPECT_GE(s.time_s, low / 1'000'000'000 - 1);
  EXPECT_LE(s.time_s, high / 1'000'000'000);
}

TEST(FakeClock, OffsetMovesWallClocksButNotMonotonic) {
  ControlFile control;
  control.write("20000");
  const long long real_before = now_ns(CLOCK_REALTIME), mono_before = now_ns(CLOCK_MONOTONIC);
  const auto samples = run_probe(control.path(), 0);
  const long long real_after = now_ns(CLOCK_REALTIME), mono_after = now_ns(CLOCK_MONOTONIC);
  for (const Sample& s : samples) {
    expect_wall_clocks_within(s, real_before + 20'000 * ms, real_after + 20'000 * ms);
    EXPECT_GE(s.mono, mono_before);
    EXPECT_LE(s.mono, mono_after);
  }
}

TEST(FakeClock, NegativeOffset) {
  ControlFile control;
  control.write("-5000 1.0");
  const long long before = now_ns(CLOCK_REALTIME);
  const auto samples = run_probe(control.path(), 0);
  const long long after = now_ns(CLOCK_REALTIME);
  expect_wall_clocks_within(samples[0], before - 5'000 * ms, after - 5'000 * ms);
}

TEST(FakeClock, RateSpeedsTheWallClockFromWhereItWas) {
  ControlFile control;
  control.write("0 3.0");
  const long long before = now_ns(CLOCK_REALTIME);
  const auto samples = run_probe(control.path(), 300);
  const long long after = now_ns(CLOCK_REALTIME);
  // The rate applies from the moment the file is read: no jump at the start.
  expect_wall_clocks_within(samples[0], before, after);
  const double mono = static_cast<double>(samples[1].mono - samples[0].mono);
  const double real = static_cast<double>(samples[1].real - samples[0].real);
  EXPECT_GT(real, 2.7 * mono);
  EXPECT_LT(real, 3.3 * mono + 20.0 * ms);
  EXPECT_LT(samples[1].mono - samples[0].mono, 2'000 * ms);  // monotonic is untouched
}

TEST(FakeClock, RealTimeWithoutAValidFile) {
  ControlFile control;
  for (const std::string content : {"", "garbage", "10 -2", "10 0"}) {
    if (content.empty()) {
      std::filesystem::remove(control.path());
    } else {
      control.write(content);
    }
    const long long before = now_ns(CLOCK_REALTIME);
    const auto samples = run_probe(control.path(), 0);
    const long long after = now_ns(CLOCK_REALTIME);
    SCOPED_TRACE(content);
    expect_wall_clocks_within(samples[0], before, after);
  }
}

// redis-server started with the library preloaded, reading `control`.
std::unique_ptr<redlock::test::RedisServer> fake_clock_server(const ControlFile& control) {
  redlock::test::RedisServerOptions options;
  options.environment = {std::string("LD_PRELOAD=") + REDLOCK_FAKECLOCK_LIBRARY,
                         "REDLOCK_FAKECLOCK_FILE=" + control.path()};
  return std::make_unique<redlock::test::RedisServer>(options);
}

TEST(FakeClock, RedisForgetsAKeyWhenItsClockJumps) {
  ControlFile control;
  control.write("0 1");
  auto server = fake_clock_server(control);
  ASSERT_TRUE(server->command({"SET", "k", "v", "PX", "10000"}).is_status("OK"));
  EXPECT_EQ(server->command({"GET", "k"}).str, "v");

  control.write("20000 1");
  std::this_thread::sleep_for(100ms);  // the library looks at the file every 10 ms
  EXPECT_TRUE(server->command({"GET", "k"}).is_nil());
  const auto time = server->command({"TIME"});
  ASSERT_EQ(time.elements.size(), 2u);
  const long long seconds = std::stoll(time.elements[0].str);
  EXPECT_NEAR(static_cast<double>(seconds),
              static_cast<double>(now_ns(CLOCK_REALTIME) / 1'000'000'000 + 20), 2.0);
  EXPECT_TRUE(server->command({"PING"}).is_status("PONG"));
}

TEST(FakeClock, RedisAtThreeTimesSpeedExpiresEarly) {
  ControlFile control;
  control.write("0 1");
  auto server = fake_clock_server(control);
  control.write("0 3");
  std::this_thread::sleep_for(100ms);

  ASSERT_TRUE(server->command({"SET", "k", "v", "PX", "3000"}).is_status("OK"));
  const auto set_at = Clock::now();
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(server->command({"GET", "k"}).str, "v");  // about 0.9 s of its 3 s have passed
  while (!server->command({"GET", "k"}).is_nil() && Clock::now() - set_at < 5s) {
    std::this_thread::sleep_for(20ms);
  }
  const auto gone_after = Clock::now() - set_at;
  EXPECT_GT(gone_after, 600ms);
  EXPECT_LT(gone_after, 2500ms);  // a real clock would keep it for 3 s
}

}  // namespace
}  // namespace redlock::chaos
