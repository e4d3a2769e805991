// Links against the installed redlock and exercises a code path that needs no
// server: option validation must reject an empty node list with an exception that
// says what is wrong.
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include <redlock/redlock.hpp>

int main() {
  // The library reports the version its headers were generated with.
  if (std::strcmp(redlock::version(), REDLOCK_VERSION_STRING) != 0) {
    std::printf("FAIL: redlock::version() is %s, the headers say %s\n", redlock::version(),
                REDLOCK_VERSION_STRING);
    return 1;
  }
  std::printf("ok: redlock %s\n", redlock::version());

  redlock::Options options;  // no nodes
  try {
    auto client = redlock::Client::create(options);
    std::puts("FAIL: Client::create accepted an empty node list");
    return 1;
  } catch (const std::invalid_argument& e) {
    std::printf("ok: Client::create rejected an empty node list: %s\n", e.what());
  }

  // The error category is part of the archive, not only of the headers.
  auto code = redlock::make_error_code(redlock::errc::conflict);
  std::printf("ok: %s error %d: %s\n", code.category().name(), code.value(),
              code.message().c_str());
  return 0;
}
