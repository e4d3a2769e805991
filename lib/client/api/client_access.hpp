#pragma once
// Inside the library (and its tests): a Client over an Engine made elsewhere, e.g. one
// whose nodes are scripted. Users get clients from Client::create only.

#include <memory>
#include <utility>

#include <redlock/client.hpp>

#include "client/engine/engine.hpp"

namespace redlock::detail {

struct ClientAccess {
  static std::shared_ptr<Client> make(std::shared_ptr<Engine> engine) {
    return std::shared_ptr<Client>(new Client(std::move(engine)));
  }
  /// The engine under a client, for the library's own classes built over a Client
  /// (Election).
  static const std::shared_ptr<Engine>& engine(const Client& client) { return client.engine_; }
};

}  // namespace redlock::detail
