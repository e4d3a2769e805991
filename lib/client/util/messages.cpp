#include "client/util/messages.hpp"

namespace redlock::detail {

std::string quote_key(std::string_view key) {
  constexpr std::size_t shown = 64;
  std::string text = "\"";
  // Keys are binary. A NUL would cut the message short wherever it is handled as a C
  // string, and other control bytes garble logs, so they (and the quoting characters)
  // are written as \xNN; UTF-8 names stay readable.
  for (const char c : key.substr(0, shown)) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f || c == '"' || c == '\\') {
      static constexpr char hex[] = "0123456789abcdef";
      text += "\\x";
      text += hex[byte >> 4];
      text += hex[byte & 15];
    } else {
      text += c;
    }
  }
  text += key.size() > shown ? "...\" (" + std::to_string(key.size()) + " bytes)" : "\"";
  return text;
}

Error cancelled_error(std::string_view what) {
  return Error(make_error_code(errc::cancelled), std::string(what) + ": the client closed");
}

std::string elapsed_ms(core::Clock::time_point since, core::Clock::time_point now) {
  return std::to_string(
             std::chrono::duration_cast<std::chrono::milliseconds>(now - since).count()) +
         " ms";
}

}  // namespace redlock::detail
