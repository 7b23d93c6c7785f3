#pragma once
// The job agent (`ddpctl job ...`, started by the sbatch script; docs/running.md):
// what each subcommand does on the node, its loops included, so that the
// CLI only reads options and prints. One header a job: job_sample.hpp (the
// sampler), job_watch.hpp (the watchdog), job_check.hpp (the node check and
// its verdict), job_step_ended.hpp (in-job restarts), job_stacks.hpp (the
// stacks), provenance.hpp (what the attempt runs with); job_acts.hpp holds
// the requeue that excludes nodes, job_place.hpp where the agent runs.
// The decisions are in watchdog.hpp, node_check.hpp and in_job_restart.hpp;
// the jobs are their use of files, commands, the clock and the job's
// environment, all through Context, so that unit tests run every loop on a
// fake clock. This header gathers them for the CLI (src/cli/job.cpp).
#include "agent/job_acts.hpp"
#include "agent/job_check.hpp"
#include "agent/job_events.hpp"
#include "agent/provenance.hpp"
#include "agent/job_place.hpp"
#include "agent/job_sample.hpp"
#include "agent/job_stacks.hpp"
#include "agent/job_step_ended.hpp"
#include "agent/job_watch.hpp"
#include "agent/log_folder.hpp"
