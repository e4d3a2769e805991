#include "checker/planted_violation.hpp"

#include <algorithm>
#include <string>

namespace redlock::chaos {

namespace {

HoldEvent forged_from(const HoldEvent& real, int index) {
  HoldEvent forged = real;
  forged.client = "planted";
  forged.value = "planted-" + std::string(name(real.primitive)) + "-" + std::to_string(index);
  forged.start_ns = real.start_ns - 1;
  forged.end_ns = real.end_ns;
  // No token (nor term): the token rule skips it, so the one finding it can cause is the
  // overlap, never a regression of its own or of the real hold.
  forged.token.reset();
  return forged;
}

}  // namespace

std::vector<HoldEvent> planted_against(const HoldEvent& real) {
  if (real.end_ns - real.start_ns < 2) return {};
  std::vector<HoldEvent> planted;
  switch (real.primitive) {
    case Primitive::reader: {
      HoldEvent writer = forged_from(real, 0);
      writer.primitive = Primitive::writer;
      planted.push_back(std::move(writer));
      break;
    }
    case Primitive::permit:
      for (int i = 0; i < std::max(real.permits, 1); ++i) planted.push_back(forged_from(real, i));
      break;
    case Primitive::exclusive:
    case Primitive::multi:
    case Primitive::writer:
    case Primitive::election:
      planted.push_back(forged_from(real, 0));
      break;
  }
  return planted;
}

void PlantSites::offer(const HoldEvent& hold) {
  if (sites_.contains(hold.primitive) || planted_against(hold).empty()) return;
  sites_.emplace(hold.primitive, hold);
}

}  // namespace redlock::chaos
