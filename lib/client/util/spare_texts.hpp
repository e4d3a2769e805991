#pragma once
// Strings kept for reuse: a held lock's key and value. A lock's key (past the short
// string's 15 characters) and its 32-character value are each a heap block that every
// lock cycle would make and free again; a lock gives both back when it goes, on
// whatever thread drops it, and the next acquisition takes them from here.

#include <cstddef>
#include <string>
#include <string_view>

namespace redlock::detail {

/// A string holding `text`, in a kept block when one is spare.
std::string spare_text(std::string_view text);

/// A string of `size` characters (their values unspecified) to be written over, in a
/// kept block when one is spare.
std::string spare_buffer(std::size_t size);

/// Keeps `text`'s storage for a later spare_text(); drops it when it has none on the
/// heap, more than 256 bytes, or enough are kept already.
void give_back_text(std::string&& text) noexcept;

}  // namespace redlock::detail
