#pragma once
// Helpers that several subcommands share: where templates and runs live,
// terminal colours, and turning RUN|JOBID arguments into jobs.
#include <string>
#include <vector>

#include "runs.hpp"

namespace ddpctl::cli {

// --templates, else $DDPCTL_TEMPLATES, else the bundled templates.
std::string templates_dir(const std::string& flag);

// ANSI colour only when stdout is a terminal and NO_COLOR is unset.
bool use_color();
std::string paint(const std::string& text, const char* ansi_code);
// The colour for a Slurm job state (green running, yellow pending, red failed).
const char* state_color(const std::string& state);

// One job a command acts on: from a run's ledger, or a bare job id.
struct JobRef {
  std::string job_id;
  const Run* run = nullptr;        // null for a bare job id
  const Attempt* attempt = nullptr;
};

// RUN (name, id, prefix or path) or JOBID arguments -> runs and their jobs.
// `runs` receives the runs named (kept alive for the refs' pointers).
std::vector<JobRef> resolve_targets(const std::vector<std::string>& args, const std::string& root,
                                    std::vector<Run>& runs);

// Seconds between polls in --wait/--watch/-f loops ($DDPCTL_POLL_INTERVAL, default 2).
double poll_interval_s();

}  // namespace ddpctl::cli
