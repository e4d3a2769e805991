#pragma once
// The replies of a Redlock cycle, read straight from the bytes a node sent: a grant
// (+OK to SET NX PX, :1 from the release script), a refusal (a nil, :0) or an error.
// Only the reply types those commands can produce are understood.

#include <cstddef>
#include <string_view>
#include <vector>

namespace redlock_limit {

enum class Verdict { granted, refused, error };

/// Parses the complete replies at the front of `bytes`, appends one verdict per reply to
/// `verdicts`, and returns how many bytes they took; an incomplete reply at the end is
/// left for the next call. Throws std::runtime_error on a reply no cycle command gives
/// (an array, a map...), since the count of replies would be wrong from there on.
std::size_t scan_replies(std::string_view bytes, std::vector<Verdict>& verdicts);

}  // namespace redlock_limit
