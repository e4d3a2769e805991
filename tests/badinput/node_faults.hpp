#pragma once
// The rows of the bad-input table where a node, not the caller, is at fault: each row
// makes any number of such nodes and says what a client must report for each of them.

#include <cstddef>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include <redlock/error.hpp>

namespace redlock::badinput {

/// Nodes of one kind, alive as long as this object.
struct BadNodes {
  std::vector<std::string> urls;            ///< for Options::nodes
  std::vector<std::string> names;           ///< NodeOutcome::node: the URL with the password masked
  std::vector<std::string> where;           ///< host:port, as connection details name the node
  std::vector<std::shared_ptr<void>> keep;  ///< servers, fake peers, sockets
};

struct NodeFault {
  std::string name;  ///< test name suffix
  std::function<BadNodes(std::size_t count)> make;
  errc code;          ///< NodeOutcome::error of such a node
  NodeStatus status;  ///< NodeOutcome::status of such a node
  std::string cause;  ///< found in NodeOutcome::detail
  /// Whether the detail itself carries host:port (connection-level errors do; Redis'
  /// own error texts do not, and the message names the node in front of them instead).
  bool detail_names_node;
};

/// Every row: refused, unresolvable name, non-Redis peer, wrong password, NOAUTH,
/// READONLY replica, OOM, MOVED, an error reply without text, unexpected reply type, an
/// array header too large to allocate, never answers.
std::vector<NodeFault> node_faults();

inline std::ostream& operator<<(std::ostream& out, const NodeFault& fault) {
  return out << fault.name;
}

}  // namespace redlock::badinput
