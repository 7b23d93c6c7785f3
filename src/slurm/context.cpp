#include "slurm/context.hpp"

#include <cstdlib>

namespace ddpctl {

double poll_interval_from_env() {
  if (const char* v = std::getenv("DDPCTL_POLL_INTERVAL"); v && *v) {
    double s = std::atof(v);
    if (s > 0) return s;
  }
  return 2.0;
}

}  // namespace ddpctl
