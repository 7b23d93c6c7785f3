#include "base/clock.hpp"

#include <chrono>
#include <ctime>
#include <thread>

namespace ddpctl {

double SystemClock::monotonic() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

long long SystemClock::now() { return static_cast<long long>(std::time(nullptr)); }

double SystemClock::wall() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

double PollBackoff::after_poll(bool changed) {
  if (changed) {
    next_ = base_;
    return next_;
  }
  double wait = next_;
  next_ = next_ * 2 > max_ ? max_ : next_ * 2;
  return wait;
}

void SystemClock::sleep(double seconds) {
  if (seconds > 0) std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

}  // namespace ddpctl
