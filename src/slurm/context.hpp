#pragma once
// What the workflows need from the outside world, made once by the CLI
// (src/cli/app.cpp) and passed down: the one CommandRunner, the SlurmClient
// over it, the clock that polling loops wait on, the process environment
// (variables, PATH), and how often they poll. Unit tests build one over a
// FakeRunner, a fake clock and a map of variables.
#include "base/clock.hpp"
#include "base/environment.hpp"
#include "base/process.hpp"
#include "slurm/slurm.hpp"

namespace ddpctl {

struct Context {
  CommandRunner& runner;  // for programs other than Slurm's (gnuplot)
  SlurmClient& slurm;
  Clock& clock;
  Environment& env;
  double poll_s = 2.0;  // seconds between polls in --wait, --watch and -f loops
};

// $DDPCTL_POLL_INTERVAL (seconds, > 0), else 2.
double poll_interval_from_env();

}  // namespace ddpctl
