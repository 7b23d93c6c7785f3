#pragma once
// Time as the core's polling loops see it. The CLI uses the system's clock;
// unit tests pass a fake one whose sleep only moves its hands, so a loop that
// waits 30 s runs in microseconds and never depends on the machine's speed.
namespace ddpctl {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual double monotonic() = 0;  // seconds since some fixed point; for intervals
  virtual long long now() = 0;     // Unix seconds; for what Slurm and the records say
  // Unix seconds with their fraction: for comparing with files' times (the
  // job agent's samples and stall records).
  virtual double wall() { return static_cast<double>(now()); }
  virtual void sleep(double seconds) = 0;
};

// How long a watch waits before its next poll: no faster than the jobs can
// change. The base interval while something changes; doubled after each poll
// that changed nothing, up to `max_s`; back to the base at the first change.
// A user watching a day-long pending job costs Slurm one call every 30 s,
// not every 2 s.
class PollBackoff {
 public:
  PollBackoff(double base_s, double max_s) : base_(base_s), max_(max_s < base_s ? base_s : max_s), next_(base_s) {}
  // The wait after a poll that did (or did not) show a change.
  double after_poll(bool changed);
  double base() const { return base_; }
  double max() const { return max_; }

 private:
  double base_, max_, next_;
};

class SystemClock : public Clock {
 public:
  double monotonic() override;
  long long now() override;
  double wall() override;
  void sleep(double seconds) override;
};

}  // namespace ddpctl
