#pragma once
// The site's limits as Slurm states them: QOS and association limits
// (sacctmgr), partition limits and reservations (scontrol), and the user's
// current usage (scontrol show assoc_mgr); site_limits_read.hpp reads them.
// Which of them a job is held to (its account, QOS and associations up to
// root), and the limits in words. What they say of a shape is
// site_limits_check.hpp's, of a grid's arrays site_limits_submit.hpp's.
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

// The job's account (the shape's, else the user's default) and QOS (the
// shape's, else its association's default, else "normal").
std::string job_account(const JobAsk& job, const SiteLimits& site);
std::string job_qos(const JobAsk& job, const SiteLimits& site);
// The user's association for the account (partition-specific first), then
// its accounts up to root: the levels whose limits apply to a job.
std::vector<const AssocLimits*> assoc_chain(const SiteLimits& site, const std::string& account,
                                            const std::string& partition);

// "4 GPUs per job" / "gres/gpu=2" in words for messages.
std::string tres_words(const std::string& name, long long value);

// Limits in Slurm's own names, for doctor: "MaxTRESPerJob gres/gpu=2,
// MaxWall 4h"; "no limits" when none is set.
std::string describe_limits(const QosLimits& q);
std::string describe_limits(const AssocLimits& a);
// "maint (maintenance) Nov 25 20:15 to 22:15 on 6 nodes".
std::string describe_reservation(const Reservation& r, long long now);
// A time on the local clock: "20:00" today (by `now`), else "Nov 26 20:00".
std::string clock_words(long long t, long long now);
// Names joined by ", " for messages.
std::string join_words(const std::vector<std::string>& v);

// A time limit a user writes, rounded down to whole minutes: "59m", "1h30m"
// (format_duration's Compact style).
inline std::string fit_time_words(long long seconds) {
  return format_duration(static_cast<double>(seconds >= 60 ? seconds / 60 * 60 : seconds), DurationStyle::Compact);
}

}  // namespace ddpctl
