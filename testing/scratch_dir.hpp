#pragma once
// The fleet's temporary directory, removed with everything in it when the fleet goes,
// whether the test passed or threw.

#include <string>

namespace redlock::testing::detail {

class ScratchDir {
 public:
  /// mkdtemp under $TMPDIR (when short enough) or /tmp. Throws std::runtime_error.
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace redlock::testing::detail
