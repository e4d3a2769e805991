// redlock-chaos-run: runs chaos scenarios (scenarios.cpp) against a fresh cluster each,
// checks the event records of every worker with the safety checker, and reports.
//
//   redlock-chaos-run [--scenario NAME[,NAME...]|all] [--duration 30s] [--report FILE]
//                     [--processes N] [--threads N] [--keys N] [--hold D] [--primitive P]
//                     [--min-acquisitions N] [--plant-violations] [--keep] [--list] [--help]
//
// A scenario passes when no stale write was accepted, every worker exited cleanly, and
// either (in model) there is no violation, no token regression and at least
// --min-acquisitions acquisitions, or (out of model, where expected) the checker did find
// violations (of the scenario's primitive, when it names one). Exit status: 0 all passed,
// 1 a scenario failed, 2 usage error.

#include <stdlib.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "checker/event_json.hpp"
#include "checker/planted_violation.hpp"
#include "checker/report_json.hpp"
#include "checker/safety_checker.hpp"
#include "common/command_line.hpp"
#include "runner/run_progress.hpp"
#include "runner/scenario.hpp"
#include "worker/event_log.hpp"

namespace {

using namespace redlock::chaos;
using Clock = std::chrono::steady_clock;
using nlohmann::json;

struct Config {
  std::vector<std::string> scenarios;  // empty: all
  milliseconds duration{30'000};
  std::string report;
  int processes = 0;  // 0: the scenario's own
  int threads = 0;
  int keys = 0;                      // 0: the scenario's own
  std::optional<milliseconds> hold;  // the scenario's own when unset
  std::string primitive;             // empty: the scenario's own
  std::uint64_t min_acquisitions = 20;
  bool keep = false;
  bool plant_violations = false;
  std::string worker = REDLOCK_CHAOS_WORKER_BINARY;
  std::string fake_clock = REDLOCK_FAKECLOCK_LIBRARY;
};

std::vector<std::string> split(std::string_view text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(',', start);
    if (end == std::string_view::npos) end = text.size();
    if (end > start) out.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// Parses the command line with CLI11; exits 0 after --help or --list, 2 on a usage error.
Config parse(int argc, char** argv, const std::vector<Scenario>& catalogue) {
  Config c;
  CLI::App app{
      "Runs chaos scenarios against fresh local clusters and checks every holder's record "
      "with the safety checker.",
      "redlock-chaos-run"};
  std::vector<std::string> names;
  for (const auto& s : catalogue) names.push_back(s.name);
  std::string scenarios = "all";
  std::string duration = "30s";
  bool list = false;
  app.add_option("--scenario", scenarios, "Scenarios to run, comma-separated, or all")
      ->type_name("NAME[,NAME...]")
      ->check([&](const std::string& value) -> std::string {
        if (value == "all") return {};
        for (const auto& name : split(value)) {
          if (std::find(names.begin(), names.end(), name) == names.end()) {
            return "unknown scenario " + name + " (see --list)";
          }
        }
        return {};
      })
      ->capture_default_str();
  app.add_option("--duration", duration, "How long each scenario runs (at least 1s)")
      ->type_name("DURATION")
      ->check([](const std::string& value) -> std::string {
        auto d = parse_duration(value);
        return d && d->count() >= 1000 ? "" : "needs a duration of at least 1s, e.g. 30s";
      })
      ->capture_default_str();
  app.add_option("--report", c.report, "Write the JSON report here")->type_name("FILE");
  app.add_option("--processes", c.processes, "Worker processes (default: the scenario's own)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--threads", c.threads, "Threads per worker (default: the scenario's own)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--keys", c.keys, "Keys per primitive (default: the scenario's own)")
      ->check(CLI::NonNegativeNumber);
  std::string hold;
  app.add_option("--hold", hold,
                 "How long each critical section lasts (default: the scenario's own)")
      ->type_name("DURATION")
      ->check([](const std::string& value) -> std::string {
        return parse_duration(value) ? "" : "needs a duration, e.g. 0ms or 20ms";
      });
  app.add_option("--primitive", c.primitive,
                 "What every worker takes, instead of the scenario's own (most run the mix)")
      ->check(CLI::IsMember({"exclusive", "rw", "semaphore", "multi", "mix", "election"}));
  app.add_option("--min-acquisitions", c.min_acquisitions,
                 "Fewest acquisitions an in-model scenario must make to pass")
      ->capture_default_str();
  app.add_flag("--plant-violations", c.plant_violations,
               "After the check, add to each scenario's records the holds that break each "
               "primitive's rule once (chaos/checker/planted_violation.hpp) and fail unless the "
               "checker reports every one");
  app.add_flag("--keep", c.keep, "Keep each scenario's directory (records, node logs)");
  app.add_flag("--list", list, "List the scenarios and exit");
  app.add_option("--worker", c.worker, "The worker binary")->type_name("PATH");
  app.add_option("--fake-clock", c.fake_clock, "The clock library preloaded into nodes")
      ->type_name("PATH");
  app.footer(
      "A scenario passes when no stale write was accepted, every worker exited cleanly, and "
      "either (in model) there is no violation, no token regression and at least "
      "--min-acquisitions acquisitions, or (out of model, where expected) the checker found "
      "violations.\nExit status: 0 all passed, 1 a scenario failed, 2 usage error.\n\n"
      "Example:\n  chaos/run --scenario node_paused,clock_jump_two --duration 60s --report "
      "chaos-report.json");
  parse_or_exit(app, argc, argv);
  if (list) {
    for (const auto& s : catalogue) {
      std::cout << s.name << (s.in_model ? "" : " (out of model)") << ": " << s.description << "\n";
    }
    std::exit(0);
  }
  if (scenarios != "all") c.scenarios = split(scenarios);
  c.duration = *parse_duration(duration);
  if (!hold.empty()) c.hold = *parse_duration(hold);
  return c;
}

std::string make_dir(const std::string& name) {
  std::string pattern =
      (std::filesystem::temp_directory_path() / ("redlock-chaos-" + name + "-XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp " + pattern);
  return pattern;
}

std::string join(const std::vector<std::string>& items) {
  std::string text;
  for (const auto& item : items) text += (text.empty() ? "" : ",") + item;
  return text;
}

// The nodes as worker process `process` sees them: some through their second proxy, and
// those it cannot reach as addresses where nothing listens, so its client finds them down
// from the first attempt on.
std::vector<std::string> nodes_seen_by(const ChaosCluster& cluster, const WorkerSettings& w,
                                       std::size_t process) {
  std::vector<std::string> urls = cluster.urls();
  if (process < w.second_proxy.size()) {
    for (std::size_t node : w.second_proxy[process]) urls.at(node) = cluster.second_url(node);
  }
  if (process >= w.unreachable.size()) return urls;
  for (std::size_t node : w.unreachable[process]) {
    urls.at(node) =
        "unix:///nonexistent/redlock-chaos-unreachable-" + std::to_string(node) + ".sock";
  }
  return urls;
}

json run_scenario(const Scenario& scenario, const Config& config) {
  WorkerSettings w = scenario.workers;
  if (config.processes > 0) w.processes = config.processes;
  if (config.threads > 0) w.threads = config.threads;
  if (config.keys > 0) w.keys = config.keys;
  if (config.hold) w.hold = *config.hold;
  if (!config.primitive.empty()) w.primitive = config.primitive;
  const std::string dir = make_dir(scenario.name);
  std::vector<std::string> failures;
  SafetyChecker checker;
  const auto started = Clock::now();
  {
    ChaosCluster cluster(scenario.cluster, dir, config.fake_clock);
    EventLog faults(dir + "/runner.jsonl");
    std::vector<WorkerProcess> workers;
    const std::string stall_ms = std::to_string((w.ttl * 3 / 2).count()) + "ms";
    const std::string key_prefix = "chaos:" + scenario.name + ":";
    for (int p = 0; p < w.processes; ++p) {
      const std::string id = "w" + std::to_string(p);
      workers.emplace_back(config.worker,
                           std::vector<std::string>{"--nodes",
                                                    join(nodes_seen_by(cluster, w, p)),
                                                    "--store",
                                                    cluster.store_url(),
                                                    "--events",
                                                    dir + "/events-" + id + ".jsonl",
                                                    "--id",
                                                    id,
                                                    "--threads",
                                                    std::to_string(w.threads),
                                                    "--keys",
                                                    std::to_string(w.keys),
                                                    "--duration",
                                                    std::to_string(config.duration.count()) + "ms",
                                                    "--ttl",
                                                    std::to_string(w.ttl.count()) + "ms",
                                                    "--wait",
                                                    std::to_string(w.wait.count()) + "ms",
                                                    "--hold",
                                                    std::to_string(w.hold.count()) + "ms",
                                                    "--stall-every",
                                                    std::to_string(w.stall_every),
                                                    "--stall",
                                                    stall_ms,
                                                    "--prefix",
                                                    key_prefix,
                                                    "--seed",
                                                    std::to_string(p + 1),
                                                    "--foreign-threads",
                                                    std::to_string(w.foreign_threads),
                                                    "--primitive",
                                                    w.primitive,
                                                    "--permits",
                                                    std::to_string(w.permits),
                                                    "--unsafe-permit-quorum",
                                                    std::to_string(w.unsafe_permit_quorum),
                                                    "--unsafe-election-quorum",
                                                    std::to_string(w.unsafe_election_quorum),
                                                    "--unfenced-every",
                                                    std::to_string(w.unfenced_every),
                                                    "--member-guard",
                                                    w.member_guard ? "on" : "off",
                                                    "--replicas-to-ack",
                                                    std::to_string(w.replicas_to_ack),
                                                    "--quorum",
                                                    std::to_string(w.quorum),
                                                    "--allow-two-masters",
                                                    w.allow_two_masters ? "on" : "off"},
                           dir + "/worker-" + id + ".log");
    }
    const auto t0 = Clock::now();
    std::vector<Action> actions = scenario.schedule(config.duration, w);
    std::stable_sort(actions.begin(), actions.end(),
                     [](const Action& a, const Action& b) { return a.at < b.at; });
    ScenarioContext context{cluster, workers, key_prefix};
    for (const Action& action : actions) {
      std::this_thread::sleep_until(t0 + action.at);
      faults.append_line(
          json{{"type", "fault"}, {"at_ns", monotonic_ns()}, {"what", action.what}}.dump());
      try {
        action.run(context);
      } catch (const std::exception& error) {
        failures.push_back(action.what + ": " + error.what());
      }
    }
    // A worker ends after the duration plus at most one wait, one stall and an unlock.
    const milliseconds grace = w.wait + 2 * w.ttl + milliseconds(15'000);
    for (std::size_t p = 0; p < workers.size(); ++p) {
      const auto left =
          std::chrono::duration_cast<milliseconds>(t0 + config.duration + grace - Clock::now());
      const int status = workers[p].wait(std::max(left, milliseconds(1000)));
      if (status != 0) {
        failures.push_back("worker w" + std::to_string(p) + " exited with status " +
                           std::to_string(status) + " (see " + dir + "/worker-w" +
                           std::to_string(p) + ".log)");
      }
    }
  }
  const double duration_s = std::chrono::duration<double>(Clock::now() - started).count();

  PlantSites sites;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".jsonl") continue;
    std::ifstream in(entry.path());
    std::string line;
    while (std::getline(in, line)) {
      ParsedLine parsed = parse_event_line(line);
      auto* event = std::get_if<Event>(&parsed);
      // What is not an event (ignored or malformed) is counted by add_line.
      if (event == nullptr) {
        checker.add_line(line);
        continue;
      }
      if (auto* hold = std::get_if<HoldEvent>(event); hold && config.plant_violations) {
        sites.offer(*hold);
      }
      checker.add(*event);
    }
  }
  const SafetyReport report = checker.report();
  json planted = json::object();
  for (const auto& [primitive, site] : sites.sites()) {
    SafetyChecker with_planted = checker;
    for (const HoldEvent& forged : planted_against(site)) with_planted.add(forged);
    const SafetyReport caught = with_planted.report();
    const std::string rule(name(primitive));
    const auto count = [&](const SafetyReport& r) {
      auto found = r.violations_by_primitive.find(rule);
      return found == r.violations_by_primitive.end() ? std::uint64_t{0} : found->second;
    };
    const bool seen = count(caught) > count(report);
    planted[rule] = seen;
    if (!seen) failures.push_back("the checker missed the violation planted against a " + rule);
  }

  if (report.stale_writes_accepted > 0) failures.push_back("stale writes accepted");
  if (scenario.in_model) {
    if (report.violations > 0) failures.push_back("mutual exclusion violated");
    if (scenario.tokens_in_model && report.token_regressions > 0) {
      failures.push_back("fencing tokens regressed");
    }
    if (report.acquisitions < config.min_acquisitions) {
      failures.push_back("only " + std::to_string(report.acquisitions) + " acquisitions");
    }
  } else if (scenario.expect_violations && report.violations == 0) {
    failures.push_back("the checker found no violation in an out-of-model scenario");
  } else if (scenario.expect_violations && !scenario.expect_violations_of.empty() &&
             !report.violations_by_primitive.contains(scenario.expect_violations_of)) {
    failures.push_back("the checker found no violation of the " + scenario.expect_violations_of +
                       " rule");
  }
  const bool passed = failures.empty();
  if (passed && !config.keep) {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }

  json details = to_json(report);
  json out = {{"name", scenario.name},
              {"in_model", scenario.in_model},
              {"acquisitions", report.acquisitions},
              {"conflicts", report.conflicts},
              {"errors", report.errors},
              {"violations", report.violations},
              {"token_regressions", report.token_regressions},
              {"stale_writes_accepted", report.stale_writes_accepted},
              {"stale_writes_rejected", report.stale_writes_rejected},
              {"duration_s", duration_s},
              {"expect_violations", scenario.expect_violations},
              {"primitive", w.primitive},
              {"violations_by_primitive", details["violations_by_primitive"]},
              {"acquisitions_by_primitive", details["acquisitions_by_primitive"]},
              {"planted_violations_caught", planted},
              {"passed", passed},
              {"failures", failures},
              {"error_codes", details["error_codes"]},
              {"examples", details["examples"]}};
  if (!passed || config.keep) out["dir"] = dir;
  return out;
}

void print_table(const json& scenarios) {
  std::printf("\n%-28s %-6s %7s %7s %6s %5s %5s %9s %9s %6s  %s\n", "scenario", "model", "acq",
              "confl", "err", "viol", "regr", "stale_acc", "stale_rej", "dur_s", "result");
  for (const auto& s : scenarios) {
    std::printf("%-28s %-6s %7llu %7llu %6llu %5llu %5llu %9llu %9llu %6.1f  %s\n",
                s["name"].get<std::string>().c_str(), s["in_model"].get<bool>() ? "in" : "out",
                s["acquisitions"].get<unsigned long long>(),
                s["conflicts"].get<unsigned long long>(), s["errors"].get<unsigned long long>(),
                s["violations"].get<unsigned long long>(),
                s["token_regressions"].get<unsigned long long>(),
                s["stale_writes_accepted"].get<unsigned long long>(),
                s["stale_writes_rejected"].get<unsigned long long>(), s["duration_s"].get<double>(),
                s["passed"].get<bool>() ? "ok" : "FAILED");
    if (s.contains("acquisitions_by_primitive") && s["primitive"] != "exclusive") {
      std::string line;
      for (const auto& [primitive, count] : s["acquisitions_by_primitive"].items()) {
        line += " " + primitive + " " + std::to_string(count.get<unsigned long long>());
        if (s["violations_by_primitive"].contains(primitive)) {
          line +=
              " (" +
              std::to_string(s["violations_by_primitive"][primitive].get<unsigned long long>()) +
              " viol)";
        }
      }
      std::printf("    acquired:%s\n", line.c_str());
    }
    if (s.contains("planted_violations_caught") && !s["planted_violations_caught"].empty()) {
      std::string line;
      for (const auto& [primitive, seen] : s["planted_violations_caught"].items()) {
        line += " " + primitive + (seen.get<bool>() ? " caught" : " MISSED");
      }
      std::printf("    planted:%s\n", line.c_str());
    }
    for (const auto& why : s["failures"]) std::printf("    %s\n", why.get<std::string>().c_str());
    if (s.contains("dir"))
      std::printf("    records kept in %s\n", s["dir"].get<std::string>().c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<Scenario> catalogue = all_scenarios();
  const Config config = parse(argc, argv, catalogue);
  std::vector<const Scenario*> selected;
  for (const Scenario& scenario : catalogue) {
    if (config.scenarios.empty() || std::find(config.scenarios.begin(), config.scenarios.end(),
                                              scenario.name) != config.scenarios.end()) {
      selected.push_back(&scenario);
    }
  }
  json scenarios = json::array();
  bool all_passed = true;
  RunProgress progress(selected.size(), config.duration);
  for (const Scenario* each : selected) {
    const Scenario& scenario = *each;
    std::cerr << progress.starting(scenario.name) << ": " << scenario.description << std::endl;
    const auto started = Clock::now();
    json result;
    try {
      result = run_scenario(scenario, config);
    } catch (const std::exception& error) {
      result = {{"name", scenario.name},
                {"in_model", scenario.in_model},
                {"acquisitions", 0},
                {"conflicts", 0},
                {"errors", 0},
                {"violations", 0},
                {"token_regressions", 0},
                {"stale_writes_accepted", 0},
                {"stale_writes_rejected", 0},
                {"duration_s", 0.0},
                {"passed", false},
                {"failures", {std::string("could not run: ") + error.what()}}};
    }
    const auto took = std::chrono::duration_cast<milliseconds>(Clock::now() - started);
    progress.finished(took);
    std::cerr << "scenario " << scenario.name << ": "
              << (result["passed"].get<bool>() ? "ok" : "FAILED") << " in " << human_duration(took)
              << std::endl;
    all_passed = all_passed && result["passed"].get<bool>();
    scenarios.push_back(std::move(result));
  }
  const json report = {{"scenarios", scenarios}};
  if (!config.report.empty()) std::ofstream(config.report) << report.dump(2) << "\n";
  print_table(scenarios);
  return all_passed ? 0 : 1;
}
