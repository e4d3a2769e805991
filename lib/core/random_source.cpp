#include "core/random_source.hpp"

#include <memory>
#include <mutex>
#include <random>

#include "core/lock_value.hpp"

namespace redlock::core {

RandomSource system_random() {
  // One generator per source, seeded from the CSPRNG; the mutex makes a source shared
  // between threads safe. Jitter needs no cryptographic strength, only independence
  // between processes.
  struct State {
    std::mutex mutex;
    std::mt19937_64 engine;
  };
  auto state = std::make_shared<State>();
  std::uint64_t seed = 0;
  fill_random(&seed, sizeof seed);
  state->engine.seed(seed);
  return [state] {
    std::lock_guard lock(state->mutex);
    return state->engine();
  };
}

}  // namespace redlock::core
