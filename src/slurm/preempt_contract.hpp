#pragma once
// A site's preemption contract (docs/profiles.md "Preemption"): what Slurm
// does to a job of a partition or QOS that another job preempts, read from
// what any user may ask: `scontrol show config` (PreemptType, the cluster's
// PreemptMode, PreemptExemptTime, and whether the user's --signal is sent at
// preemption: PreemptParameters=send_user_signal from 23.02, before that
// SlurmctldParameters=preempt_send_user_signal), `scontrol -o show
// partition` (each partition's PriorityTier, PreemptMode, GraceTime, nodes)
// and, with preempt/qos, `sacctmgr show qos` (Preempt, PreemptMode,
// GraceTime, PreemptExemptTime). Pure: the reads are the caller's.
//
// Who preempts whom: with preempt/partition_prio, a job in a partition of a
// higher PriorityTier preempts jobs of a lower tier on the nodes both
// partitions share; with preempt/qos, a QOS preempts the QOS its Preempt
// list names. A preempted job gets SIGTERM (or its --signal, where the user
// signal is sent), GraceTime seconds to end, then SIGKILL; it is then
// requeued (REQUEUE), cancelled (CANCEL) or suspended (SUSPEND).
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ddpctl {

// A partition or QOS whose jobs other jobs preempt.
struct Preemptible {
  std::string kind;             // "partition" or "qos"
  std::string name;
  std::string mode;             // REQUEUE, CANCEL or SUSPEND (GANG,SUSPEND says SUSPEND)
  long long grace_s = 0;        // GraceTime
  std::optional<long long> exempt_s;  // a QOS's own PreemptExemptTime
  std::vector<std::string> by;  // the partitions or QOS whose jobs preempt it
};

struct PreemptContract {
  std::string type;             // "preempt/partition_prio", "preempt/qos", "preempt/none"
  std::string cluster_mode;     // the cluster's PreemptMode ("OFF" when none)
  long long exempt_s = 0;       // PreemptExemptTime: how long a job runs before it can be preempted
  bool user_signal = false;     // the job's --signal is sent at preemption (else SIGTERM)
  std::string user_signal_setting;  // the setting that says so, as Slurm shows it
  std::vector<Preemptible> preemptible;
  std::vector<std::string> unread;  // what could not be read, and why (never silence)

  bool preempts() const { return type != "preempt/none" && !type.empty() && cluster_mode != "OFF"; }
  const Preemptible* find(const std::string& kind, const std::string& name) const;
};

// `config`: `scontrol show config` as SlurmClient::config() gives it;
// `partitions`: `scontrol -o show partition`; `qos`: `sacctmgr -n -P show
// qos format=` kPreemptQosFormat, or "" without accounting.
extern const char* const kPreemptQosFormat;
PreemptContract read_preempt_contract(const std::map<std::string, std::string>& config,
                                      const std::string& partitions, const std::string& qos);

// What a preemption does to a job of `p`, in one line: "preempted with
// SIGTERM, 30 s grace, then requeued".
std::string describe_preemption(const PreemptContract& c, const Preemptible& p);

}  // namespace ddpctl
