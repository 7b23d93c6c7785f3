#include "slurm/reasons.hpp"

#include <map>

#include "base/regex.hpp"
#include "base/text.hpp"

namespace ddpctl {

namespace {

// The resource part of a limit code, in words.
std::string resource_words(const std::string& r) {
  static const std::map<std::string, std::string> words = {
      {"Cpu", "CPUs"},          {"CPU", "CPUs"},           {"GRES", "GPUs (GRES)"},   {"Mem", "memory"},
      {"Memory", "memory"},     {"Node", "nodes"},         {"Jobs", "running jobs"},  {"Job", "running jobs"},
      {"SubmitJobs", "queued jobs"}, {"SubmitJob", "queued jobs"}, {"Wall", "wall time"},
      {"WallDuration", "time limit"}, {"Billing", "billing units"}, {"Energy", "energy"},
      {"License", "licenses"},  {"BB", "burst buffer"},    {"Unknown", "a resource"}, {"TRES", "a resource"},
  };
  auto it = words.find(r);
  return it == words.end() ? r : it->second;
}

// (Assoc|QOS)(Grp|Max|Min)<Resource>[Per(Job|Node|User|Account)][Minutes|RunMinutes][Limit].
std::optional<ReasonWords> limit_words(const std::string& code) {
  static const Regex grammar(
      "^(Assoc|QOS)(Grp|Max|Min)(Cpu|CPU|GRES|Mem|Memory|Node|Jobs|Job|SubmitJobs?|SubmitJob|Wall|WallDuration|Billing|"
      "Energy|License|BB|Unknown)(Per(Job|Node|User|Account))?(Minutes|RunMinutes)?(PerJob)?(Limit|NotSatisfied)?$");
  RegexMatch m;
  if (!grammar.full_match(code, &m)) return std::nullopt;
  std::string scope = m.str(1) == "QOS" ? "your QOS" : "your account (association)";
  std::string kind = m.str(2), res = resource_words(m.str(3));
  std::string per = m.matched(5) ? m.str(5) : m.matched(7) ? "Job" : "";
  std::string minutes = m.str(6);
  ReasonWords w;
  if (kind == "Min") {
    w.words = scope + " needs a job to ask for more " + res + " than this one does";
    w.todo = "ask for more, or use another QOS";
    w.never = true;
    return w;
  }
  if (minutes == "RunMinutes") {
    w.words = scope + "'s running jobs hold the most " + res + "-minutes it allows";
    w.todo = "it starts as they finish; a shorter time limit fits sooner";
    return w;
  }
  if (minutes == "Minutes") {
    if (kind == "Grp") {
      w.words = scope + " has used up its " + res + "-minutes budget";
      w.todo = "it will not start until the budget is raised or reset; ask the site or use another account";
      w.never = true;
    } else {
      w.words = "this job asks for more " + res + "-minutes (size x time) than " + scope + " allows per job";
      w.todo = "ask for less, or a shorter time limit";
      w.never = true;
    }
    return w;
  }
  if (kind == "Grp") {
    if (m.str(3) == "Wall") {
      w.words = scope + " has used up its wall-time budget";
      w.todo = "ask the site, or use another account";
      w.never = true;
    } else {
      w.words = scope + "'s group uses the most " + res + " it allows";
      w.todo = "it starts when the group's other jobs end; `ddpctl submit` says how many are in use";
    }
    return w;
  }
  // Max
  if (per == "User" || per == "Account" || m.str(3) == "Jobs" || m.str(3) == "Job" || m.str(3).rfind("Submit", 0) == 0) {
    std::string who = per == "Account" ? "your account" : "you";
    w.words = who + " already hold" + (per == "Account" ? "s" : "") + " the most " + res + " " + scope + " allows";
    w.todo = "it starts when " + std::string(per == "Account" ? "the account's" : "your") + " other jobs end";
    return w;
  }
  if (m.str(3) == "Wall" || m.str(3) == "WallDuration") {
    w.words = "its time limit is longer than " + scope + " allows per job";
    w.todo = "it will never start: cancel it and ask for less time (`ddpctl submit` checks this first)";
    w.never = true;
    return w;
  }
  w.words = "it asks for more " + res + " per " + (per == "Node" ? "node" : "job") + " than " + scope + " allows";
  w.todo = "it will never start: cancel it and ask for less, or use another QOS/account (`ddpctl submit` checks this first)";
  w.never = true;
  return w;
}

const std::map<std::string, ReasonWords>& named() {
  static const std::map<std::string, ReasonWords> words = {
      // Waiting its turn.
      {"Resources", {"waiting for free nodes", "", false}},
      {"Priority", {"other jobs are ahead in the queue", "", false}},
      {"WaitingForScheduling", {"not looked at by the scheduler yet", "", false}},
      {"Prolog", {"the prolog is running", "", false}},
      {"Cleaning", {"its last run is still being cleaned up after a requeue", "", false}},
      {"Configuring", {"its nodes are booting", "", false}},
      {"SchedDefer", {"the scheduler deferred it", "", false}},
      {"FedJobLock", {"the federation is deciding where it runs", "", false}},
      {"Licenses", {"waiting for licenses", "", false}},
      {"BurstBufferResources", {"waiting for burst-buffer space", "", false}},
      {"BurstBufferStageIn", {"staging its burst-buffer data in", "", false}},
      {"PowerNotAvail", {"waiting for power", "", false}},
      {"PowerReserved", {"power is reserved for other jobs", "", false}},
      {"JobArrayTaskLimit", {"the array's task limit is reached", "", false}},
      // Told to wait.
      {"BeginTime", {"not allowed to start yet (--begin)", "", false}},
      {"Dependency", {"waiting for another job to finish", "", false}},
      {"DependencyNeverSatisfied", {"its dependency can never be met", "cancel it; the job it waited for failed", true}},
      {"JobHeldUser", {"held by you", "scontrol release JOBID starts it", true}},
      {"JobHeldAdmin", {"held by an administrator", "ask the site why", true}},
      {"JobHoldMaxRequeue", {"held after too many requeues", "read its logs, then scontrol release JOBID", true}},
      {"launch failed requeued held", {"its launch failed; requeued and held", "read its logs, then scontrol release JOBID", true}},
      // Nodes and partitions.
      {"ReqNodeNotAvail", {"a node it needs is down, drained or reserved", "", false}},
      {"NodeDown", {"a node it needs is down", "", false}},
      {"FrontEndDown", {"no front-end node is up", "ask the site", false}},
      {"PartitionDown", {"the partition is down", "it starts when the site brings it up", false}},
      {"PartitionInactive", {"the partition is inactive", "it starts when the site activates it", false}},
      {"PartitionTimeLimit", {"its time limit is longer than the partition allows", "it will never start: cancel it and ask for less time", true}},
      {"PartitionNodeLimit", {"it asks for more or fewer nodes than the partition allows (or they are down)", "check nodes: against the partition's MaxNodes", false}},
      {"PartitionConfig", {"the partition's configuration does not fit it", "check the partition's limits (scontrol show partition)", true}},
      {"BadConstraints", {"no node has the features it asks for", "it will never start: cancel it and fix constraint/gpu_type", true}},
      {"Constraints", {"its constraints cannot be met", "fix constraint/gpu_type", true}},
      {"MaxMemPerLimit", {"it asks for more memory per CPU or node than the partition allows", "ask for less memory", true}},
      // Reservations.
      {"Reservation", {"waiting for its reservation to begin", "", false}},
      {"ReservationDeleted", {"the reservation it names was deleted", "cancel it and submit without the reservation", true}},
      {"ReservationInvalid", {"the reservation it names is not valid for it", "cancel it and check the reservation's users and accounts", true}},
      // Accounts and QOS.
      {"InvalidAccount", {"the account is not valid", "cancel it and use one of yours (sacctmgr show assoc user=$USER)", true}},
      {"InvalidQOS", {"the QOS is not valid for its account", "cancel it and use one of your association's QOS", true}},
      {"AccountNotAllowed", {"the partition does not take jobs of its account", "use another partition or account", true}},
      {"QOSNotAllowed", {"the partition does not take jobs of its QOS", "use another partition or QOS", true}},
      {"AssociationJobLimit", {"your association runs the most jobs it allows", "it starts when one ends", false}},
      {"AssociationResourceLimit", {"your association uses the most of a resource it allows", "it starts when your group's jobs end", false}},
      {"AssociationTimeLimit", {"your association's time budget is used up", "ask the site, or use another account", true}},
      {"AccountingPolicy", {"held by an accounting limit", "ddpctl submit's check names it", false}},
      {"QOSJobLimit", {"your QOS runs the most jobs it allows", "it starts when one ends", false}},
      {"QOSResourceLimit", {"your QOS uses the most of a resource it allows", "it starts when its jobs end", false}},
      {"QOSTimeLimit", {"your QOS's time budget is used up", "ask the site, or use another QOS", true}},
      {"QOSUsageThreshold", {"your QOS's usage threshold is reached", "ask the site, or use another QOS", true}},
      {"MaxJobsPerAccount", {"your account runs the most jobs its QOS allows", "it starts when one ends", false}},
      {"MaxSubmitJobsPerAccount", {"your account has the most queued jobs its QOS allows", "", false}},
      {"MaxGRESPerAccount", {"your account uses the most GPUs its QOS allows", "it starts when the account's jobs end", false}},
      {"MaxCpuPerAccount", {"your account uses the most CPUs its QOS allows", "it starts when the account's jobs end", false}},
      {"MaxNodePerAccount", {"your account uses the most nodes its QOS allows", "it starts when the account's jobs end", false}},
      {"MaxMemoryPerAccount", {"your account uses the most memory its QOS allows", "it starts when the account's jobs end", false}},
      {"MaxBillingPerAccount", {"your account uses the most billing units its QOS allows", "it starts when the account's jobs end", false}},
      {"MaxEnergyPerAccount", {"your account uses the most energy its QOS allows", "", false}},
      {"MaxLicensePerAccount", {"your account uses the most licenses its QOS allows", "", false}},
      {"MaxBBPerAccount", {"your account uses the most burst buffer its QOS allows", "", false}},
      {"MaxUnknownPerAccount", {"your account uses the most of a resource its QOS allows", "", false}},
      {"DeadLine", {"its deadline passed", "", true}},
      {"InactiveLimit", {"it reached the system's inactivity limit", "", true}},
      // Endings (sacct's Reason, squeue of an ended job).
      {"NonZeroExitCode", {"exited with a non-zero status", "", false}},
      {"RaisedSignal", {"ended by a signal", "", false}},
      {"TimeLimit", {"reached its time limit", "", false}},
      {"OutOfMemory", {"ran out of memory", "", false}},
      {"SystemFailure", {"a node, file system or the network failed", "", false}},
      {"JobLaunchFailure", {"it could not be launched (file system or program)", "read its batch log", false}},
      {"BurstBufferOperation", {"a burst-buffer operation failed", "", false}},
  };
  return words;
}

}  // namespace

ReasonWords reason_words(const std::string& full) {
  if (full.empty() || full == "None" || full == "(null)") return {};
  // "ReqNodeNotAvail, Reserved for maintenance", "ReqNodeNotAvail, UnavailableNodes:g1".
  std::string code = trim(full.substr(0, full.find(',')));
  std::string detail = full.find(',') == std::string::npos ? "" : trim(full.substr(full.find(',') + 1));
  ReasonWords w;
  if (auto it = named().find(code); it != named().end()) w = it->second;
  else if (auto l = limit_words(code)) w = *l;
  else return {full, "", false};
  if (code == "ReqNodeNotAvail" && detail.find("Reserved for maintenance") != std::string::npos) {
    w.words = "its nodes are reserved for maintenance during its time limit";
    w.todo = "it starts after the maintenance; a shorter time limit may start it before (ddpctl submit --fit-time)";
  } else if (!detail.empty()) {
    w.words += " (" + detail + ")";
  }
  return w;
}

std::string explain_reason(const std::string& reason) {
  ReasonWords w = reason_words(reason);
  return w.todo.empty() ? w.words : w.words + "; " + w.todo;
}

}  // namespace ddpctl
