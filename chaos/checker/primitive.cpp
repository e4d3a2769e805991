#include "checker/primitive.hpp"

#include <array>
#include <utility>

namespace redlock::chaos {
namespace {

constexpr std::array<std::pair<Primitive, std::string_view>, 6> names{{
    {Primitive::exclusive, "exclusive"},
    {Primitive::multi, "multi"},
    {Primitive::reader, "reader"},
    {Primitive::writer, "writer"},
    {Primitive::permit, "permit"},
    {Primitive::election, "election"},
}};

}  // namespace

std::string_view name(Primitive primitive) {
  for (const auto& [p, text] : names) {
    if (p == primitive) return text;
  }
  return "exclusive";
}

std::optional<Primitive> primitive_named(std::string_view text) {
  for (const auto& [p, candidate] : names) {
    if (candidate == text) return p;
  }
  return std::nullopt;
}

bool may_share(Primitive a, Primitive b) {
  return a == b && (a == Primitive::reader || a == Primitive::permit);
}

}  // namespace redlock::chaos
