#pragma once
// The names attempt records give to errors: the checker groups errors by them
// (error_codes), and a name reads better in a report than a number.

#include <string>
#include <system_error>

namespace redlock::chaos {

/// The errc's name ("quorum_unreachable") for the library's codes, the message otherwise.
std::string code_name(std::error_code code);

}  // namespace redlock::chaos
