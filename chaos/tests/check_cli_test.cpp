// redlock-chaos-check over files, as the scenario runner calls it.

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace {

struct CliRun {
  int status = -1;
  std::string out;
};

CliRun run(const std::string& args) {
  const std::string command = "'" REDLOCK_CHAOS_CHECK_BINARY "' " + args + " 2>/dev/null";
  FILE* pipe = ::popen(command.c_str(), "r");
  CliRun result;
  if (!pipe) return result;
  char buffer[4096];
  while (std::fgets(buffer, sizeof buffer, pipe)) result.out += buffer;
  const int status = ::pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

class CheckCli : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "redlock-check-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string file(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }
  std::string dir_;
};

TEST_F(CheckCli, MergesFilesFromSeveralProcesses) {
  const auto a = file(
      "a.jsonl",
      R"({"type":"hold","key":"k","client":"a","value":"1","start_ns":0,"end_ns":100,"token":1})"
      "\n"
      R"({"type":"attempt","key":"k","client":"a","result":"acquired","at_ns":0})"
      "\n");
  const auto b = file(
      "b.jsonl",
      R"({"type":"hold","key":"k","client":"b","value":"2","start_ns":100,"end_ns":200,"token":2})"
      "\n"
      R"({"type":"attempt","key":"k","client":"b","result":"acquired","at_ns":100})"
      "\n");
  const CliRun clean = run(a + " " + b);
  EXPECT_EQ(clean.status, 0);
  const auto report = nlohmann::json::parse(clean.out);
  EXPECT_EQ(report["acquisitions"], 2);
  EXPECT_EQ(report["violations"], 0);
  EXPECT_EQ(report["safe"], true);

  const auto c = file(
      "c.jsonl",
      R"({"type":"hold","key":"k","client":"c","value":"3","start_ns":150,"end_ns":250,"token":3})"
      "\n"
      R"({"type":"hold","key":"k","client":"c","value":"4","start_ns":300,)");  // cut off
  const CliRun unsafe = run(a + " " + b + " " + c);
  EXPECT_EQ(unsafe.status, 1);
  const auto found = nlohmann::json::parse(unsafe.out);
  EXPECT_EQ(found["violations"], 1);
  EXPECT_EQ(found["malformed_lines"], 1);
}

TEST_F(CheckCli, ReadsStdinAndFailsOnUsageOrMissingFiles) {
  const auto a = file("a.jsonl", R"({"type":"attempt","result":"conflict"})"
                                 "\n");
  const CliRun piped = run("- < " + a);
  EXPECT_EQ(piped.status, 0);
  EXPECT_EQ(nlohmann::json::parse(piped.out)["conflicts"], 1);
  EXPECT_EQ(run("").status, 2);
  EXPECT_EQ(run(dir_ + "/missing.jsonl").status, 2);
}

}  // namespace
