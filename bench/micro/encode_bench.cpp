// How much of a command's cost is its RESP encoding: the acquire command of one node as
// the connection encodes it today (hiredis' redisFormatCommandArgv, then appended to the
// output buffer) against a direct encoder that writes into the same reused buffer with
// std::to_chars. Evidence for docs/performance.md, not a part of the library.

#include <benchmark/benchmark.h>
#include <hiredis/hiredis.h>

#include <array>
#include <charconv>
#include <string>
#include <string_view>

namespace {

// EVALSHA <sha1> 2 <key> <key>:fence <value> <ttl> <fencing>: the acquire of one node.
constexpr std::array<std::string_view, 8> acquire_argv{
    "EVALSHA",           "3f2bc1cbb0d2b2e8cbd6d6b1a7b7f3c2a49b6e01", "2", "bench:5e1f09a2:w17",
    "bench:5e1f09a2:w17:fence", "9b0d6c1e4f2a83570c6de1f3a2b4c5d6",     "10000", "0"};

void append_number(std::string& out, std::size_t value) {
  char digits[24];
  const auto end = std::to_chars(digits, digits + sizeof digits, value).ptr;
  out.append(digits, end);
}

void encode_direct(std::string& out, const std::array<std::string_view, 8>& argv) {
  out += '*';
  append_number(out, argv.size());
  out += "\r\n";
  for (std::string_view arg : argv) {
    out += '$';
    append_number(out, arg.size());
    out += "\r\n";
    out.append(arg);
    out += "\r\n";
  }
}

void BM_hiredis_format(benchmark::State& state) {
  std::array<const char*, 8> pointers{};
  std::array<std::size_t, 8> lengths{};
  for (std::size_t i = 0; i < acquire_argv.size(); ++i) {
    pointers[i] = acquire_argv[i].data();
    lengths[i] = acquire_argv[i].size();
  }
  std::string out;
  for (auto _ : state) {
    out.clear();
    char* formatted = nullptr;
    const int length = redisFormatCommandArgv(&formatted, int(pointers.size()), pointers.data(),
                                              lengths.data());
    out.append(formatted, std::size_t(length));
    redisFreeCommand(formatted);
    benchmark::DoNotOptimize(out.data());
  }
}
BENCHMARK(BM_hiredis_format);

void BM_direct_encode(benchmark::State& state) {
  std::string out;
  for (auto _ : state) {
    out.clear();
    encode_direct(out, acquire_argv);
    benchmark::DoNotOptimize(out.data());
  }
}
BENCHMARK(BM_direct_encode);

// Both must produce the same bytes, or the comparison means nothing.
void BM_check_same_bytes(benchmark::State& state) {
  std::array<const char*, 8> pointers{};
  std::array<std::size_t, 8> lengths{};
  for (std::size_t i = 0; i < acquire_argv.size(); ++i) {
    pointers[i] = acquire_argv[i].data();
    lengths[i] = acquire_argv[i].size();
  }
  char* formatted = nullptr;
  const int length =
      redisFormatCommandArgv(&formatted, int(pointers.size()), pointers.data(), lengths.data());
  std::string direct;
  encode_direct(direct, acquire_argv);
  const bool same = direct == std::string_view(formatted, std::size_t(length));
  redisFreeCommand(formatted);
  for (auto _ : state) benchmark::DoNotOptimize(same);
  if (!same) state.SkipWithError("the encoders disagree");
}
BENCHMARK(BM_check_same_bytes)->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
