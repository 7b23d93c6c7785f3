#pragma once
// Will a shape ever start? The site's limits (site_limits.hpp) checked
// against what it asks, before anything is queued. A shape is Never (a
// per-job limit it breaks: it would pend forever), NotNow (the group's or
// the user's current usage holds it until jobs end), Later (a reservation on
// every node that fits it begins before its time limit would end: it cannot
// start until the reservation is over, and a shorter --time starts it now),
// or Ok. docs/slurm.md "Limits and reservations".
#include <optional>
#include <string>
#include <vector>

#include "slurm/site_limits.hpp"

namespace ddpctl {

struct LimitProblem {
  std::string field;  // the spec field to change: "gpus_per_node", "time", "account", ...
  std::string message;
};

struct Feasibility {
  enum class Kind { Ok, Later, NotNow, Never };
  Kind kind = Kind::Ok;
  std::vector<LimitProblem> never;    // per-job limits it breaks
  std::vector<std::string> not_now;   // usage that holds it now, with what frees it
  // Later: the reservation in the way, when the job could start at its full
  // time limit, and the longest time limit that lets it start now (none when
  // no time limit would).
  std::string reservation;
  std::optional<long long> earliest_start;
  std::optional<long long> fit_time_s;
  std::string later;                  // in words
  std::string account, qos;           // what the check took as the job's
};

// Every check above, for one shape at `now` (Unix seconds).
Feasibility check_limits(const JobAsk& job, const SiteLimits& site, long long now);

}  // namespace ddpctl
