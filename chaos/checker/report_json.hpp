#pragma once
// The checker's report as JSON: the counters under the names the scenario report uses
// (acquisitions, conflicts, errors, violations, token_regressions, stale_writes_accepted,
// stale_writes_rejected), then diagnostics and a few examples of each finding.

#include <nlohmann/json.hpp>

#include "checker/safety_checker.hpp"

namespace redlock::chaos {

nlohmann::json to_json(const SafetyReport& report);

}  // namespace redlock::chaos
