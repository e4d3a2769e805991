// Take a lock with a fencing token and write through a FencedStore.
//
//   fenced-write --nodes redis://127.0.0.1:7101,... --storage redis://127.0.0.1:7200 KEY VALUE
//
// A second run while the first still holds the lock waits for it; a writer whose
// token is older than one the store has already seen is refused.

#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>

#include <redlock/redlock.hpp>

namespace {

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> parts;
  std::stringstream stream(list);
  for (std::string part; std::getline(stream, part, ',');) parts.push_back(part);
  return parts;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 7 || std::strcmp(argv[1], "--nodes") != 0 || std::strcmp(argv[3], "--storage") != 0) {
    std::fprintf(stderr, "usage: %s --nodes URL,URL,... --storage URL KEY VALUE\n", argv[0]);
    return 2;
  }
  using namespace std::chrono_literals;
  try {
    redlock::Options options;
    options.nodes = split(argv[2]);
    auto client = redlock::Client::create(options);
    auto store = redlock::FencedStore::create(argv[4]);
    const std::string key = argv[5];

    auto lock = client->lock("lock:" + key, {.ttl = 10s, .wait = 30s, .fencing = true});
    if (!lock) {
      std::fprintf(stderr, "%s\n", lock.error().message().c_str());
      return 1;
    }
    const auto token = *lock->fencing_token();
    auto written = store->write("lock:" + key, token, key, argv[6]);
    if (!written) {
      // stale_token: a newer holder wrote first; this process must not retry the write.
      std::fprintf(stderr, "%s\n", written.error().message().c_str());
      return 1;
    }
    std::printf("wrote %s = %s with token %llu (validity left %lld ms)\n", key.c_str(), argv[6],
                static_cast<unsigned long long>(token),
                static_cast<long long>(lock->validity().count()));
    return lock->unlock() ? 0 : 1;
  } catch (const std::invalid_argument& error) {
    std::fprintf(stderr, "%s\n", error.what());
    return 2;
  }
}
