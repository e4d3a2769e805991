#pragma once
// TEST ONLY: a client whose semaphore permits are granted by fewer nodes than the safe
// quorum floor(N*K/(K+1))+1. Client::acquire_permit refuses such a quorum (docs/kinds.md
// proves why), so this reaches past the public API into the library's own acquire, the
// seam its tests use (client/kinds/kind.hpp). With it the chaos suite shows the checker
// catching K+1 holders of K permits; nothing else may use it.

#include <memory>
#include <string_view>

#include <redlock/redlock.hpp>

namespace redlock::detail {
class Engine;
}

namespace redlock::chaos {

class LoweredPermitQuorum {
 public:
  /// A client over `options`; its permits need only `quorum` granting nodes.
  LoweredPermitQuorum(const Options& options, int quorum);

  /// Everything but permits, as usual, over the same connections.
  Client& client() noexcept { return *client_; }

  /// acquire_permit() with the lowered quorum; every other option as given.
  Result<Lock> acquire_permit(std::string_view key, const SemaphoreOptions& options);

 private:
  // The client shares the engine; both stay alive until the process closes the client.
  std::shared_ptr<detail::Engine> engine_;
  std::shared_ptr<Client> client_;
  int quorum_;
};

}  // namespace redlock::chaos
