#pragma once
// Will a shape ever start? The site's limits as Slurm states them — QOS and
// association limits (sacctmgr), partition limits and reservations
// (scontrol) — and the user's current usage (scontrol show assoc_mgr),
// checked before anything is queued. A shape is Never (a per-job limit it
// breaks: it would pend forever), NotNow (the group's or the user's current
// usage holds it until jobs end), Later (a reservation on every node that
// fits it begins before its time limit would end: it cannot start until the
// reservation is over, and a shorter --time starts it now), or Ok.
// docs/slurm.md "Limits and reservations".
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/text.hpp"

namespace ddpctl {

// Trackable resources by Slurm's TRES names ("cpu", "node", "mem" in MiB,
// "gres/gpu"): a limit, a request or a usage.
using Tres = std::map<std::string, long long>;

struct QosLimits {
  std::string name;
  Tres max_per_job, max_per_node, max_per_user, grp;
  std::optional<long long> max_wall_s;
  std::optional<long long> max_jobs_per_user, max_submit_per_user, grp_jobs, grp_submit;
  std::string flags;
};

// One association as sacctmgr lists it: a user's (user set) or an account's
// (user empty); limits left empty are inherited from the parent (Max*) and
// every level's Grp* limits apply to its whole subtree.
struct AssocLimits {
  std::string account, user, partition, parent;
  std::vector<std::string> qos;  // the QOS it may use
  std::string default_qos;
  Tres grp, max_per_job, max_per_node;
  std::optional<long long> max_wall_s;
  std::optional<long long> max_jobs, max_submit, grp_jobs, grp_submit;
};

struct PartitionLimits {
  std::string name;
  std::optional<long long> max_time_s;  // none: UNLIMITED
  std::optional<long long> max_nodes;
  std::vector<std::string> allow_accounts, deny_accounts, allow_qos, deny_qos;  // allow: empty = ALL
  std::string qos;                       // the partition's own QOS, if any
  bool is_default = false;
};

struct Reservation {
  std::string name;
  long long start = 0, end = 0;  // Unix seconds
  std::vector<std::string> nodes;  // expanded
  std::vector<std::string> users, accounts;  // who may use it
  std::string flags;
  bool maintenance() const { return flags.find("MAINT") != std::string::npos; }
};

// Current usage (scontrol show assoc_mgr): what each account's subtree and
// each QOS holds now, and what the user holds in each QOS.
struct Usage {
  bool known = false;
  std::map<std::string, Tres> account_tres;  // running jobs' TRES, by account (its whole subtree)
  std::map<std::string, long long> account_jobs;  // also "account/user": the user's own association
  std::map<std::string, long long> account_submit;  // queued or running jobs (GrpSubmitJobs), keyed likewise
  std::map<std::string, Tres> qos_tres;
  std::map<std::string, long long> qos_jobs, qos_submit;  // running; queued or running (GrpSubmitJobs)
  std::map<std::string, Tres> qos_user_tres;  // the user's, by QOS
  std::map<std::string, long long> qos_user_jobs, qos_user_submit;
};

struct SiteLimits {
  std::string user, default_account;
  std::vector<AssocLimits> assocs;  // the user's, and their accounts' up to root
  std::map<std::string, QosLimits> qos;
  std::map<std::string, PartitionLimits> partitions;
  std::vector<Reservation> reservations;
  Usage usage;
  // What could not be read, in words (accounting off, a command failed):
  // those checks are skipped, never guessed.
  std::vector<std::string> unread;
  bool accounting = false;  // sacctmgr answered
  // Slurm holds jobs to QOS and association limits only with
  // AccountingStorageEnforce=limits (or safe): without it they are not
  // checked, and `enforce` says what the site has.
  bool limits_enforced = true;
  std::string enforce;
};

// What a shape asks Slurm for, resolved: `fitting` names the nodes that have
// its GPUs and CPUs in its partition (preflight's candidates).
struct JobAsk {
  int nodes = 1;
  int gpus_per_node = 0;
  int cpus_per_node = 1;
  long long mem_per_node_mib = 0;  // 0: not asked
  long long time_s = 0;             // 0: the partition's default
  std::string partition, account, qos;  // empty: the defaults
  std::string reservation;              // --reservation: runs inside it, none other is in its way
  std::vector<std::string> fitting;
};

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

// The job's account (the shape's, else the user's default) and QOS (the
// shape's, else its association's default, else "normal").
std::string job_account(const JobAsk& job, const SiteLimits& site);
std::string job_qos(const JobAsk& job, const SiteLimits& site);

// Every check above, for one shape at `now` (Unix seconds).
Feasibility check_limits(const JobAsk& job, const SiteLimits& site, long long now);

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

// "4 GPUs per job" / "gres/gpu=2" in words for messages.
std::string tres_words(const std::string& name, long long value);

// Limits in Slurm's own names, for doctor: "MaxTRESPerJob gres/gpu=2,
// MaxWall 4h"; "no limits" when none is set.
std::string describe_limits(const QosLimits& q);
std::string describe_limits(const AssocLimits& a);
// "maint (maintenance) Nov 25 20:15 to 22:15 on 6 nodes".
std::string describe_reservation(const Reservation& r, long long now);

// A time limit a user writes, rounded down to whole minutes: "59m", "1h30m"
// (format_duration's Compact style).
inline std::string fit_time_words(long long seconds) {
  return format_duration(static_cast<double>(seconds >= 60 ? seconds / 60 * 60 : seconds), DurationStyle::Compact);
}

}  // namespace ddpctl
