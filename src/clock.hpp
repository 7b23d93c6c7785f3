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
  virtual void sleep(double seconds) = 0;
};

class SystemClock : public Clock {
 public:
  double monotonic() override;
  long long now() override;
  void sleep(double seconds) override;
};

}  // namespace ddpctl
