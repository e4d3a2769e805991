#pragma once
// TEST ONLY: a candidate whose leadership is granted by fewer nodes than a majority.
// Options::quorum refuses such a quorum (two leaders could then hold disjoint sets of
// nodes), so this reaches past the public API into the library's own acquire, as
// lowered_permit_quorum.hpp does for permits. With it the chaos suite shows the checker
// catching two leaders of one election at once; nothing else may use it.

#include <chrono>
#include <memory>
#include <string>

#include <redlock/redlock.hpp>

namespace redlock::detail {
class Engine;
}

namespace redlock::chaos {

class LoweredElectionQuorum {
 public:
  /// A client over `options`; its campaigns need only `quorum` granting nodes.
  LoweredElectionQuorum(const Options& options, int quorum);

  /// The client the campaigns use; closing it ends their watchdogs.
  Client& client() noexcept { return *client_; }

  /// What Election::campaign() takes, with the lowered quorum: a fenced, auto-extended
  /// lock of `key` (a key set of that one key, a kind whose quorum can be set per lock;
  /// it excludes lock() and campaign() key by key). Its fencing_token(key) is
  /// the term. No leader record is written: the checker needs the term and the validity
  /// only.
  Result<Lock> campaign(const std::string& key, std::chrono::milliseconds ttl,
                        std::chrono::milliseconds wait);

 private:
  // The client shares the engine; both stay alive until the candidate closes the client.
  std::shared_ptr<detail::Engine> engine_;
  std::shared_ptr<Client> client_;
  int quorum_;
};

}  // namespace redlock::chaos
