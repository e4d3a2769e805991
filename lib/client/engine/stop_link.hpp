#pragma once
// Ties a caller's std::stop_token to an operation that lives on the loop thread. The stop
// callback runs on whichever thread requests the stop (or inside link() when the stop
// was already requested), so it only posts: the operation is stopped on the loop thread,
// and only if it still exists.

#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <utility>

#include "client/engine/engine.hpp"

namespace redlock::detail {

class StopLink {
 public:
  /// Loop thread. Once a stop is requested on `token`, `on_stop` runs on the loop thread
  /// (at most once; never after the engine closed). reset() stops the link; a stop
  /// requested before reset() may still run `on_stop` afterwards, so it must check
  /// whether its operation is still going.
  void link(const std::shared_ptr<Engine>& engine, std::stop_token token,
            std::function<void()> on_stop) {
    callback_.emplace(std::move(token), Post{engine, std::move(on_stop)});
  }

  /// Loop thread. Waits for a stop callback that is running on another thread (it only
  /// posts), so no callback runs after this returns.
  void reset() { callback_.reset(); }

 private:
  struct Post {
    std::weak_ptr<Engine> engine;
    std::function<void()> on_stop;
    void operator()() const {
      if (auto alive = engine.lock()) alive->post(on_stop);
    }
  };
  std::optional<std::stop_callback<Post>> callback_;
};

}  // namespace redlock::detail
