#pragma once
// A lock node that never answers: for code that must only make nodes (option checks) or
// that records the commands it is sent itself (a derived class overriding run and
// release). Header-only: the fuzz targets use it too.

#include <chrono>
#include <string>
#include <string_view>
#include <utility>

#include "member/node.hpp"

namespace redlock::detail {

class InertNode : public Node {
 public:
  explicit InertNode(std::string name) : name_(std::move(name)) {}
  const std::string& name() const noexcept override { return name_; }
  void run(const Command&, std::chrono::milliseconds, NodeCallback&&) override {}
  void release(const Command&, std::chrono::milliseconds, NodeCallback&&) override {}
  void close() override {}

 private:
  std::string name_;
};

}  // namespace redlock::detail
