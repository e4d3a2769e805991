// How much of a command's cost is its RESP encoding: the acquire command of one node
// encoded with hiredis' redisFormatCommandArgv (then appended to the output buffer, as
// the connection once did) against the library's encoder (lib/net/command_encoder),
// which writes into the same reused buffer with std::to_chars.

#include <benchmark/benchmark.h>
#include <hiredis/hiredis.h>

#include <array>
#include <string>
#include <string_view>

#include "net/command_encoder.hpp"

namespace {

// EVALSHA <sha1> 2 <key> <key>:fence <value> <ttl> <fencing>: the acquire of one node.
constexpr std::array<std::string_view, 8> acquire_argv{"EVALSHA",
                                                       "3f2bc1cbb0d2b2e8cbd6d6b1a7b7f3c2a49b6e01",
                                                       "2",
                                                       "bench:5e1f09a2:w17",
                                                       "bench:5e1f09a2:w17:fence",
                                                       "9b0d6c1e4f2a83570c6de1f3a2b4c5d6",
                                                       "10000",
                                                       "0"};

void encode_direct(std::string& out, const std::array<std::string_view, 8>& argv) {
  redlock::net::append_command(out, argv);
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
    const int length =
        redisFormatCommandArgv(&formatted, int(pointers.size()), pointers.data(), lengths.data());
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
