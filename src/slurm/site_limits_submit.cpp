#include "slurm/site_limits_submit.hpp"

#include "base/text.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <map>

namespace ddpctl {

namespace {


}  // namespace

std::vector<SubmitLimit> submit_limits(const std::vector<SubmitAsk>& arrays, const SiteLimits& site) {
  std::vector<SubmitLimit> out;
  if (!site.limits_enforced) return out;  // Slurm would not hold the grid to them either
  std::map<std::string, size_t> at;       // a limit's own key -> its place in `out`
  auto add = [&](const std::string& key, const SubmitLimit& limit, const SubmitAsk& a) {
    auto [it, fresh] = at.emplace(key, out.size());
    if (fresh) out.push_back(limit);
    SubmitLimit& l = out[it->second];
    l.asked += a.jobs;
    if (!contains(l.labels, a.label)) l.labels.push_back(a.label);
  };
  const Usage& u = site.usage;
  auto used = [&](const std::map<std::string, long long>& m, const std::string& k) -> std::optional<long long> {
    if (!u.known) return std::nullopt;
    auto it = m.find(k);
    return it == m.end() ? 0 : it->second;  // assoc_mgr lists no jobs where there are none
  };
  auto find_qos = [&](const std::string& name) -> const QosLimits* {
    auto it = site.qos.find(name);
    return name.empty() || it == site.qos.end() ? nullptr : &it->second;
  };
  for (const SubmitAsk& a : arrays) {
    std::string account = job_account(a.job, site);
    const QosLimits* job_q = find_qos(job_qos(a.job, site));
    const QosLimits* part_q = nullptr;
    if (auto p = site.partitions.find(a.job.partition); p != site.partitions.end()) part_q = find_qos(p->second.qos);
    if (part_q == job_q) part_q = nullptr;
    // Slurm's order (acct_policy_set_qos_order): the partition's QOS first,
    // unless the job's has OverPartQOS; of each kind the first that sets one counts.
    std::vector<const QosLimits*> order;
    bool over_part = job_q && job_q->flags.find("OverPartQOS") != std::string::npos;
    if (part_q && !over_part) order.push_back(part_q);
    if (job_q) order.push_back(job_q);
    if (part_q && over_part) order.push_back(part_q);
    bool qos_per_user = false, qos_grp = false;
    for (const QosLimits* q : order) {
      if (!qos_per_user && q->max_submit_per_user) {
        qos_per_user = true;
        add("qos-user:" + q->name,
            {"QOS " + q->name, "MaxSubmitJobsPerUser", true, "", *q->max_submit_per_user, used(u.qos_user_submit, q->name), 0, {}},
            a);
      }
      if (!qos_grp && q->grp_submit) {
        qos_grp = true;
        add("qos-grp:" + q->name,
            {"QOS " + q->name, "GrpSubmitJobs", false, "", *q->grp_submit, used(u.qos_submit, q->name), 0, {}}, a);
      }
    }
    std::vector<const AssocLimits*> levels = assoc_chain(site, account, a.job.partition);
    // MaxSubmitJobs: the user's association's own, else the nearest
    // account's above it (inherited); a QOS's per-user limit replaces it.
    if (!qos_per_user && !levels.empty() && !levels.front()->user.empty()) {
      const AssocLimits* mine = levels.front();
      for (const AssocLimits* l : levels)
        if (l->max_submit) {
          add("assoc-max:" + mine->account + "/" + mine->user + "/" + mine->partition,
              {"your association with account " + mine->account, "MaxSubmitJobs", true,
               l == mine ? "" : l->account, *l->max_submit, used(u.account_submit, mine->account + "/" + mine->user),
               0, {}},
              a);
          break;
        }
    }
    // GrpSubmitJobs: every level's, over its whole subtree; a QOS's replaces them.
    if (!qos_grp)
      for (const AssocLimits* l : levels)
        if (l->grp_submit) {
          bool user = !l->user.empty();
          add("assoc-grp:" + l->account + "/" + l->user + "/" + l->partition,
              {(user ? "your association with account " : "account ") + l->account, "GrpSubmitJobs", user, "",
               *l->grp_submit, used(u.account_submit, user ? l->account + "/" + l->user : l->account), 0, {}},
              a);
        }
  }
  return out;
}

std::string describe_submit_limit(const SubmitLimit& l, SubmitWhat what, long long total) {
  auto jobs = [](long long n) { return fmt::format("{} job{}", n, n == 1 ? "" : "s"); };
  const char* noun = what == SubmitWhat::Grid ? "grid" : "retry";
  std::string cells =
      l.asked == total
          ? fmt::format("the {}'s {} cell{} {} {} to Slurm", noun, l.asked, l.asked == 1 ? "" : "s",
                        l.asked == 1 ? "is" : "are", jobs(l.asked))
          : fmt::format("the {}'s {} cell{} of shape{} {} {} {} to Slurm", noun, l.asked, l.asked == 1 ? "" : "s",
                        l.labels.size() == 1 ? "" : "s", join_words(l.labels), l.asked == 1 ? "is" : "are",
                        jobs(l.asked));
  std::string submitted = fmt::format("{} submitted job{}", l.limit, l.limit == 1 ? "" : "s");
  std::string allows = l.per_user ? fmt::format("{} allows you {}", l.whose, submitted)
                                  : fmt::format("{} allows {} from all its users together", l.whose, submitted);
  std::string message = fmt::format("{}; {} ({}{})", cells, allows, l.slurm_name,
                                    l.set_on.empty() ? "" : ", set on account " + l.set_on);
  if (l.in_use) {
    long long room = std::max(0LL, l.limit - *l.in_use);
    message += fmt::format(" and {} {} queued or running: {}", l.per_user ? "you have" : "they have", *l.in_use,
                           room == 0 ? std::string("none more fit until some of them end")
                                     : fmt::format("{} more fit", room));
  } else {
    message += ": more than it takes even with nothing else queued";
  }
  std::string smaller = what == SubmitWhat::Grid ? "lower the grid, or submit it in parts"
                                                 : "retry fewer cells at once (--cells)";
  message += l.never() ? "; " + smaller : "; wait until some of " + std::string(l.per_user ? "yours" : "them") +
                                              " end, or " + smaller;
  message += " (max_parallel does not change this: every task counts";
  message += l.never() ? ")" : "; sbatch takes an array whole or not at all)";
  return message;
}

}  // namespace ddpctl
