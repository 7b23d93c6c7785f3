#pragma once
// `ddpctl job sample`: the node's sampler in the job, a usage sample every
// interval into the node's usage file (sampler.hpp takes each), and, between
// samples, the watchdog's request for the ranks' stacks answered
// (job_stacks.hpp).
#include <string>

#include "slurm/context.hpp"

namespace ddpctl {

// `job sample`: a sample every `interval_s` appended to the node's usage
// file (<log base>.usage.<node>.jsonl); between samples, every half second,
// the watchdog's request for stacks is answered. Until killed, `count`
// samples, or (with `parent_pid`) until that process is no longer its parent.
struct SampleOptions {
  std::string log_base;
  std::string proc_root = "/proc";
  double interval_s = 5;
  int count = 0;  // 0: until killed
  // The step's task that started it in the background, then became the
  // program by exec. When the program ends the sampler is an orphan, and
  // under proctrack/linuxproc Slurm no longer counts it as the job's: it
  // would sample on for ever. 0: not watched (a step of its own).
  long parent_pid = 0;
  long ticks_per_s = 100, page_size = 4096;
};
void run_sampler(const SampleOptions& o, Context& ctx);

}  // namespace ddpctl
