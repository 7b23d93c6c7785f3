#pragma once
// The ledger (ledger.json in a run directory) of every sbatch attempt. It is
// rewritten atomically before sbatch runs (intent) and after (outcome), so a
// crash at any point leaves a record that `submit` can settle by looking the
// attempt's token up in Slurm (the job's --comment carries it).
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runs/run_record.hpp"
#include "base/token.hpp"

namespace ddpctl {

// A job's --comment: "ddpctl:<token>", then the user's own comment, if any.
std::string job_comment(const std::string& token, const std::string& user_comment = "");
// Whether a job's comment (as squeue or sacct shows it) carries `token`.
bool comment_has_token(const std::string& comment, const std::string& token);

// Writes a new run's (empty) ledger. Every later change goes through
// update_ledger.
void save_ledger(const Run& run);
// Read-modify-write of the ledger under its own lock (ledger.lock in the run
// directory): `change` gets the attempts as they are on disk now, never a
// stale copy, so concurrent ddpctls lose no update; `run.attempts` becomes
// the result. An attempt once recorded is never dropped.
void update_ledger(Run& run, const std::function<void(std::vector<Attempt>&)>& change);
// Records the ends of `run`'s jobs (by job id) that its ledger does not
// hold yet, in one update_ledger; an end once recorded is never replaced.
// Returns how many it recorded. Throws as update_ledger does (a read-only
// runs folder): the caller decides whether that matters.
int record_job_ends(Run& run, const std::map<std::string, JobEnd>& ends);
// The attempt with `token` (appended, empty but for the token, if missing).
Attempt& attempt_by_token(std::vector<Attempt>& attempts, const std::string& token);
// The attempts of a ledger.json document, as read by load_run (runs.hpp).
std::vector<Attempt> ledger_attempts(const nlohmann::json& ledger);

}  // namespace ddpctl
