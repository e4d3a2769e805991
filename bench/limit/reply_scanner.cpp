#include "reply_scanner.hpp"

#include <charconv>
#include <stdexcept>
#include <string>

namespace redlock_limit {

std::size_t scan_replies(std::string_view bytes, std::vector<Verdict>& verdicts) {
  std::size_t consumed = 0;
  while (consumed < bytes.size()) {
    const auto rest = bytes.substr(consumed);
    const auto line_end = rest.find("\r\n");
    if (line_end == std::string_view::npos) break;
    const auto line = rest.substr(1, line_end - 1);
    std::size_t length = line_end + 2;
    Verdict verdict = Verdict::refused;
    switch (rest.front()) {
      case '+':
        verdict = line == "OK" ? Verdict::granted : Verdict::refused;
        break;
      case ':':
        verdict = line == "1" ? Verdict::granted : Verdict::refused;
        break;
      case '-':
        verdict = Verdict::error;
        break;
      case '$': {
        long long body = 0;
        const auto parsed = std::from_chars(line.data(), line.data() + line.size(), body);
        if (parsed.ec != std::errc() || parsed.ptr != line.data() + line.size() || body < -1) {
          throw std::runtime_error("malformed bulk length: " + std::string(line));
        }
        // A nil ($-1) has no body; a bulk string is a refusal here whatever it holds.
        if (body >= 0) length += static_cast<std::size_t>(body) + 2;
        if (rest.size() < length) return consumed;
        break;
      }
      default:
        throw std::runtime_error("unexpected reply type '" + std::string(1, rest.front()) + "'");
    }
    verdicts.push_back(verdict);
    consumed += length;
  }
  return consumed;
}

}  // namespace redlock_limit
