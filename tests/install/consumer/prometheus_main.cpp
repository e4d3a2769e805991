// Links against the installed redlock::prometheus: the observer registers the client's
// metric families in the program's registry.
#include <prometheus/registry.h>

#include <cstdio>
#include <memory>
#include <string>

#include <redlock/prometheus.hpp>

int main() {
  auto registry = std::make_shared<prometheus::Registry>();
  auto observer = redlock::prometheus::make_observer(*registry, {{"service", "consumer"}});
  if (!observer) {
    std::puts("FAIL: make_observer returned no observer");
    return 1;
  }
  bool found = false;
  for (const auto& family : registry->Collect()) {
    found = found || family.name == "redlock_acquisitions_total";
  }
  if (!found) {
    std::puts("FAIL: redlock_acquisitions_total is not in the registry");
    return 1;
  }
  std::puts("ok: redlock::prometheus registered redlock_acquisitions_total");
  return 0;
}
