#include "checker/report_json.hpp"

namespace redlock::chaos {
namespace {

using nlohmann::json;

json hold_json(const HoldEvent& hold) {
  json out = {{"client", hold.client},
              {"value", hold.value},
              {"start_ns", hold.start_ns},
              {"end_ns", hold.end_ns}};
  if (hold.token) out[hold.primitive == Primitive::election ? "term" : "token"] = *hold.token;
  if (hold.primitive != Primitive::exclusive) out["primitive"] = name(hold.primitive);
  if (hold.primitive == Primitive::permit) out["permits"] = hold.permits;
  if (!hold.keys.empty()) out["keys"] = hold.keys;
  return out;
}

json write_json(const WriteEvent& write) {
  return {{"client", write.client},
          {"token", write.token},
          {"start_ns", write.start_ns},
          {"end_ns", write.end_ns}};
}

}  // namespace

json to_json(const SafetyReport& report) {
  json overlaps = json::array();
  for (const auto& o : report.overlap_examples) {
    overlaps.push_back(
        {{"key", o.first.key},
         {"first", hold_json(o.first)},
         {"second", hold_json(o.second)},
         {"overlap_ns", std::min(o.first.end_ns, o.second.end_ns) - o.second.start_ns}});
  }
  json excess = json::array();
  for (const auto& e : report.excess_permit_examples) {
    json holders = json::array();
    for (const auto& holder : e.holders) holders.push_back(hold_json(holder));
    excess.push_back({{"key", e.admitted.key},
                      {"permits", e.admitted.permits},
                      {"admitted", hold_json(e.admitted)},
                      {"holders", holders}});
  }
  json regressions = json::array();
  for (const auto& r : report.regression_examples) {
    regressions.push_back(
        {{"key", r.later.key}, {"earlier", hold_json(r.earlier)}, {"later", hold_json(r.later)}});
  }
  json stale = json::array();
  for (const auto& s : report.stale_write_examples) {
    stale.push_back(
        {{"key", s.stale.key}, {"newer", write_json(s.newer)}, {"stale", write_json(s.stale)}});
  }
  return {
      {"safe", report.safe()},
      {"acquisitions", report.acquisitions},
      {"conflicts", report.conflicts},
      {"errors", report.errors},
      {"error_codes", report.error_codes},
      {"violations", report.violations},
      {"violations_by_primitive", report.violations_by_primitive},
      {"acquisitions_by_primitive", report.acquisitions_by_primitive},
      {"token_regressions", report.token_regressions},
      {"stale_writes_accepted", report.stale_writes_accepted},
      {"stale_writes_rejected", report.stale_writes_rejected},
      {"writes_accepted", report.writes_accepted},
      {"writes_failed", report.writes_failed},
      {"holds", report.holds},
      {"locks", report.locks},
      {"empty_holds", report.empty_holds},
      {"malformed_lines", report.malformed_lines},
      {"malformed_examples", report.malformed_examples},
      {"ignored_records", report.ignored_records},
      {"examples",
       {{"violations", overlaps},
        {"excess_permits", excess},
        {"token_regressions", regressions},
        {"stale_writes", stale}}},
  };
}

}  // namespace redlock::chaos
