#pragma once
// The observer and the log sink hear every event on the client's own thread, one at a
// time, in order (observer.hpp), while a synchronous caller may be running the loop on
// its own thread (SyncCalls::lead). An event heard there is copied (what it points to
// lives only during the call) and relayed to the background thread
// (LeaderFollowers::relay_to_background), which tells it as soon as it is free; the caller
// keeps the loop, and its call returns once what it relayed was told. So observing a
// client does not change how its calls reach the loop, nor when its events are heard.

#include <redlock/options.hpp>

namespace redlock::detail {

/// `options` with its observer and log sink (where set) relaying the events heard while
/// a synchronous caller leads the loop; the events heard elsewhere reach them directly.
Options relay_events(Options options);

}  // namespace redlock::detail
