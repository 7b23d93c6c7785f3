#pragma once
// What a preemption does to a shape (docs/running.md "When the site takes
// the nodes back"), from the contract its profile states for the shape's
// partition or QOS (`preemptible:`, docs/profiles.md "Preemption"): one note
// per shape that runs on preemptible capacity, said by `gen` and `submit`
// before anything is queued.
#include <string>
#include <vector>

#include "script/resolve.hpp"

namespace ddpctl {

// The contract a shape runs under: its partition's `preemptible:`, else its
// QOS's; null when neither is preemptible. `where`: "partition scavenger",
// "QOS preempt".
const PreemptTerms* preemptible_terms(const ResolvedRun& run, const ResolvedShape& shape, std::string* where = nullptr);

std::vector<std::string> preemption_notes(const ResolvedRun& run);

// Why the job is requeued when its training step checkpointed and stopped
// (75) on a signal ddpctl did not send: Slurm's SIGTERM to the step, which a
// preemption sends. The words the script's requeue line carries (launch.sh).
std::string outside_stop_why(const ResolvedRun& run, const ResolvedShape& shape);
// The same when the step ended with another status than 75 while Slurm
// shows the job preempted (PreemptTime, Slurm 23.02 and on): a launcher
// (torchrun ends 1 on SIGTERM) or a program without the recipe.
std::string preempted_exit_why(const ResolvedRun& run, const ResolvedShape& shape);
// How long the re-race before a requeue may take: a minute; on preemptible
// capacity a third of the grace (at least 5 s), so that the job's own
// requeue still comes before the SIGKILL (where a preemption cancels, it is
// what saves the run).
long long race_again_limit_s(const ResolvedRun& run, const ResolvedShape& shape);

}  // namespace ddpctl
