#pragma once
// What every rank was doing when the watchdog acts, gathered before it
// does: each node's sampler asked for its ranks' stacks (the request file),
// the stacks read and the culprit decided (culprit.hpp), then the ranks'
// Flight Recorder dumps where the run asked for them (flight_recorder.hpp);
// all of it into the stall record, and the culprit's ranks as the stopped.
#include <string>
#include <vector>

#include "agent/watchdog.hpp"
#include "base/clock.hpp"

namespace ddpctl {

// Where the evidence of one attempt's stall is asked for and read.
struct StallEvidenceAsk {
  std::string log_base;
  int attempt = 0;
  std::vector<std::string> nodes;
  double stacks_wait_s = 0;    // how long the samplers may take to dump the stacks
  std::string fr_dump_prefix;  // where the ranks' Flight Recorder dumps go; "": none asked for
};

// Asks for the stacks, waits for them up to ask.stacks_wait_s, and puts
// what they and the Flight Recorder say into `record`; `last` gives each
// task's CPU. False, and nothing recorded, when the stacks could not be
// asked for (said on stderr).
bool gather_stall_evidence(const StallEvidenceAsk& ask, const Observation& last, Clock& clock, double now,
                           StallRecord& record);

}  // namespace ddpctl
