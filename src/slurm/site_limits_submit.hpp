#pragma once
// The site's limits on submitted jobs (site_limits.hpp), against the job
// arrays one command is about to submit.
#include <optional>
#include <string>
#include <vector>

#include "slurm/site_limits.hpp"

namespace ddpctl {

// Submitted jobs (MaxSubmitJobs and its kin): Slurm counts every task of a
// job array as one job against them, and refuses a whole array's sbatch
// that would go over one (acct_policy_validate), whatever its %K.
// `arrays` are what one command is about to submit (a grid's arrays, a
// retry's); each limit they land in is summed over all of them, plus the
// jobs already queued or running there, as Slurm counts (a QOS's limit of
// a kind wins over the association's; the partition's QOS comes first
// unless the job's has OverPartQOS; Max limits are the user's association's,
// inherited; Grp limits apply at every level up to root).
struct SubmitAsk {
  std::string label;  // the array's shape
  JobAsk job;         // where it lands: account, QOS, partition
  long long jobs = 0; // its tasks
};
struct SubmitLimit {
  std::string whose;       // "QOS normal", "your association with account lusu", "account lusu"
  std::string slurm_name;  // "MaxSubmitJobsPerUser", "GrpSubmitJobs", "MaxSubmitJobs"
  bool per_user = true;    // the user's own jobs (else: every user's of that QOS or account)
  std::string set_on;      // an inherited Max limit: the account that sets it
  long long limit = 0;
  std::optional<long long> in_use;  // nullopt: current usage unread
  long long asked = 0;              // the tasks of `labels` that land in it
  std::vector<std::string> labels;  // the arrays that do
  bool never() const { return asked > limit; }
  bool over() const { return never() || (in_use && *in_use + asked > limit); }
};
// Every submit limit the arrays land in, over or not (`over()` says),
// in a stable order (QOS, then associations from the user's up).
std::vector<SubmitLimit> submit_limits(const std::vector<SubmitAsk>& arrays, const SiteLimits& site);
// What submits the arrays: a grid's sweep or a retry of its cells (the
// words and the remedy differ).
enum class SubmitWhat { Grid, Retry };
// A limit gone over, in words: "the grid's 40 cells are 40 jobs to Slurm;
// QOS normal allows you 30 submitted jobs (MaxSubmitJobsPerUser) and you
// have 3 queued or running: 27 more fit; lower the grid, ..."; `total` is
// every cell about to be submitted.
std::string describe_submit_limit(const SubmitLimit& l, SubmitWhat what, long long total);

}  // namespace ddpctl
