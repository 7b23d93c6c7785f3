#pragma once
// The worker's clock for durations: steady, and the seconds since one of its
// time points.
#include <chrono>

namespace ddptrain {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

}  // namespace ddptrain
