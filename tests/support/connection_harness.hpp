#pragma once
// Driving one net::Connection from a test: a libuv loop run on the test thread until a
// condition holds, and replies copied out of their callbacks.

#include <gtest/gtest.h>
#include <hiredis/hiredis.h>
#include <uv.h>

#include <chrono>
#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "net/connection.hpp"

namespace redlock::test {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Timed assertions are generous: two shared cores, and sanitizer builds.
constexpr milliseconds long_wait = 10s;

class TestLoop {
 public:
  TestLoop() {
    uv_loop_init(&loop_);
    uv_timer_init(&loop_, &guard_);
  }

  // Everything the test created must have been closed: the loop must wind down on its
  // own (a handle still open here is a leak).
  ~TestLoop() {
    uv_close(reinterpret_cast<uv_handle_t*>(&guard_), nullptr);
    const auto give_up = Clock::now() + 5s;
    while (uv_loop_alive(&loop_) && Clock::now() < give_up) uv_run(&loop_, UV_RUN_ONCE);
    if (uv_loop_close(&loop_) != 0) {
      ADD_FAILURE() << "handles still open when the test ended";
      uv_walk(
          &loop_,
          [](uv_handle_t* handle, void*) {
            if (!uv_is_closing(handle)) uv_close(handle, nullptr);
          },
          nullptr);
      uv_run(&loop_, UV_RUN_DEFAULT);
      uv_loop_close(&loop_);
    }
  }

  TestLoop(const TestLoop&) = delete;
  TestLoop& operator=(const TestLoop&) = delete;

  uv_loop_t* get() { return &loop_; }

  // Runs the loop until `done` holds or `limit` passes; returns done().
  bool run_until(const std::function<bool()>& done, milliseconds limit = long_wait) {
    bool expired = false;
    guard_.data = &expired;
    uv_timer_start(
        &guard_, [](uv_timer_t* t) { *static_cast<bool*>(t->data) = true; },
        static_cast<std::uint64_t>(limit.count()), 0);
    while (!done() && !expired) uv_run(&loop_, UV_RUN_ONCE);
    uv_timer_stop(&guard_);
    return done();
  }

  void run_for(milliseconds duration) {
    run_until([] { return false; }, duration);
  }

 private:
  uv_loop_t loop_{};
  uv_timer_t guard_{};
};

// What one callback saw (copied, since a ReplyView is only valid during the call).
struct Outcome {
  int calls = 0;
  std::error_code error;
  std::string detail;
  int type = 0;
  long long integer = 0;
  std::string str;
  std::vector<std::string> elements;
  Clock::time_point at;

  bool done() const { return calls > 0; }
  bool ok() const { return calls == 1 && !error; }
};

inline net::ReplyCallback record(Outcome& outcome) {
  return [&outcome](const net::ReplyView& view) {
    ++outcome.calls;
    outcome.at = Clock::now();
    outcome.error = view.error;
    outcome.detail = std::string(view.detail);
    if (view.reply) {
      outcome.type = view.reply->type;
      outcome.integer = view.reply->integer;
      if (view.reply->str) outcome.str.assign(view.reply->str, view.reply->len);
      for (std::size_t i = 0; i < view.reply->elements; ++i) {
        const redisReply* element = view.reply->element[i];
        outcome.elements.push_back(element->str ? std::string(element->str, element->len)
                                                : std::to_string(element->integer));
      }
    }
  };
}

inline void send(net::Connection& connection, std::initializer_list<std::string_view> argv,
                 milliseconds timeout, net::ReplyCallback callback) {
  std::vector<std::string_view> args(argv);
  connection.command(args, timeout, std::move(callback));
}

inline net::ConnectionPtr open(uv_loop_t* loop, const std::string& url,
                               const std::function<void(net::ConnectionOptions&)>& tweak = {}) {
  auto endpoint = net::parse_endpoint(url);
  EXPECT_TRUE(endpoint) << url;
  net::ConnectionOptions options;
  options.endpoint = *endpoint;
  if (tweak) tweak(options);
  return net::ConnectionPtr(net::Connection::create(loop, std::move(options)));
}

// Sends one command and runs the loop until its callback ran.
inline Outcome run_command(TestLoop& loop, net::Connection& connection,
                           std::initializer_list<std::string_view> argv,
                           milliseconds timeout = 2s) {
  Outcome outcome;
  send(connection, argv, timeout, record(outcome));
  EXPECT_TRUE(loop.run_until([&] { return outcome.done(); }));
  return outcome;
}

inline long long elapsed_ms(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration_cast<milliseconds>(to - from).count();
}

inline void expect_contains(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos) << "'" << part << "' not in: " << text;
}

}  // namespace redlock::test
