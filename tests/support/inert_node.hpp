#pragma once
// A lock node that never answers the exclusive lock's calls: for code that must only make
// nodes (option checks) or that records a family script's calls itself (a derived class
// overriding run_family_script). Header-only: the fuzz targets use it too.

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "member/node.hpp"

namespace redlock::detail {

class InertNode : public Node {
 public:
  explicit InertNode(std::string name) : name_(std::move(name)) {}
  const std::string& name() const noexcept override { return name_; }
  void acquire(std::string_view, std::string_view, std::chrono::milliseconds, bool, HolderTtl,
               std::chrono::milliseconds, NodeCallback) override {}
  void release(std::string_view, std::string_view, Announce, std::chrono::milliseconds,
               NodeCallback) override {}
  void extend(std::string_view, std::string_view, std::chrono::milliseconds,
              std::chrono::milliseconds, NodeCallback) override {}
  void fence(std::string_view, std::string_view, std::uint64_t, std::chrono::milliseconds,
             NodeCallback) override {}
  void inspect(std::string_view, std::chrono::milliseconds, NodeCallback) override {}
  void close() override {}

 private:
  std::string name_;
};

}  // namespace redlock::detail
