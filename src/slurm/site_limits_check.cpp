#include "slurm/site_limits_check.hpp"

#include "base/text.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace ddpctl {

namespace {


// The spec field a TRES is set by.
std::string field_of(const std::string& tres) {
  if (tres == "gres/gpu") return "gpus_per_node";
  if (tres == "node") return "nodes";
  if (tres == "cpu") return "cpus_per_task";
  if (tres == "mem") return "mem";
  return "sbatch";
}

// The per-job ask in TRES terms, and per node.
Tres job_tres(const JobAsk& j) {
  Tres t = {{"node", j.nodes}, {"cpu", static_cast<long long>(j.cpus_per_node) * j.nodes}};
  if (j.gpus_per_node > 0) t["gres/gpu"] = static_cast<long long>(j.gpus_per_node) * j.nodes;
  if (j.mem_per_node_mib > 0) t["mem"] = j.mem_per_node_mib * j.nodes;
  return t;
}

Tres node_tres(const JobAsk& j) {
  Tres t = {{"cpu", j.cpus_per_node}};
  if (j.gpus_per_node > 0) t["gres/gpu"] = j.gpus_per_node;
  if (j.mem_per_node_mib > 0) t["mem"] = j.mem_per_node_mib;
  return t;
}

// Slurm's own reason code for usage over a limit: "AssocGrpGRES",
// "QOSGrpCpuLimit", "QOSMaxGRESPerUser".
std::string usage_code(const std::string& scope, const std::string& tres, bool per_user) {
  bool gres = tres.rfind("gres/", 0) == 0;
  std::string r = gres ? "GRES" : tres == "cpu" ? "Cpu" : tres == "node" ? "Node" : tres == "mem" ? "Mem" : "TRES";
  if (per_user) return scope + "Max" + r + (gres ? "PerUser" : "PerUserLimit");
  return scope + "Grp" + r + (gres ? "" : "Limit");
}

struct Checker {
  const JobAsk& job;
  const SiteLimits& site;
  long long now;
  Feasibility f;

  std::vector<const AssocLimits*> chain() const { return assoc_chain(site, f.account, job.partition); }

  void never(const std::string& field, const std::string& message) { f.never.push_back({field, message}); }

  // Each TRES of `ask` against `limit`.
  void over(const Tres& ask, const Tres& limit, const std::string& per, const std::string& whose,
            const std::string& slurm_name) {
    for (const auto& [name, value] : limit) {
      auto it = ask.find(name);
      if (it == ask.end() || it->second <= value) continue;
      never(field_of(name), fmt::format("{} {} asked; {} allows {} {} ({})", tres_words(name, it->second), per, whose,
                                        tres_words(name, value), per, slurm_name));
    }
  }

  void qos_never(const QosLimits& q) {
    std::string whose = "QOS " + q.name;
    Tres ask = job_tres(job);
    over(ask, q.max_per_job, "per job", whose, "MaxTRESPerJob");
    over(node_tres(job), q.max_per_node, "per node", whose, "MaxTRESPerNode");
    // A job larger than a per-user or group total can never start either.
    over(ask, q.max_per_user, "per user", whose, "MaxTRESPerUser");
    over(ask, q.grp, "in all", whose, "GrpTRES");
    if (q.max_wall_s && job.time_s > *q.max_wall_s)
      never("time", fmt::format("time limit {} asked; {} allows {} (MaxWall)", fit_time_words(job.time_s), whose,
                                 fit_time_words(*q.max_wall_s)));
    if ((q.max_jobs_per_user && *q.max_jobs_per_user == 0) || (q.grp_jobs && *q.grp_jobs == 0))
      never("qos", fmt::format("{} allows no running jobs (MaxJobsPerUser/GrpJobs 0)", whose));
    if (q.max_submit_per_user && *q.max_submit_per_user == 0)
      never("qos", fmt::format("{} allows no submitted jobs (MaxSubmitJobsPerUser 0)", whose));
  }

  void assoc_never(const std::vector<const AssocLimits*>& levels) {
    // Max* limits: the nearest level that sets one (children inherit).
    Tres max_job, max_node;
    std::optional<long long> max_wall;
    std::string wall_from;
    std::map<std::string, std::string> from;
    for (const AssocLimits* a : levels) {
      std::string who = a->user.empty() ? "account " + a->account : "your association with account " + a->account;
      for (const auto& [k, v] : a->max_per_job)
        if (!max_job.count(k)) max_job[k] = v, from["job" + k] = who;
      for (const auto& [k, v] : a->max_per_node)
        if (!max_node.count(k)) max_node[k] = v, from["node" + k] = who;
      if (!max_wall && a->max_wall_s) max_wall = a->max_wall_s, wall_from = who;
      // Grp* limits: every level's applies to its subtree; a job larger than one can never start.
      over(job_tres(job), a->grp, "in all", who, "GrpTRES");
      if ((a->grp_jobs && *a->grp_jobs == 0) || (a->max_jobs && *a->max_jobs == 0))
        never("account", fmt::format("{} allows no running jobs (GrpJobs/MaxJobs 0)", who));
    }
    for (const auto& [k, v] : max_job) over(job_tres(job), {{k, v}}, "per job", from["job" + k], "MaxTRES");
    for (const auto& [k, v] : max_node) over(node_tres(job), {{k, v}}, "per node", from["node" + k], "MaxTRESPerNode");
    if (max_wall && job.time_s > *max_wall)
      never("time", fmt::format("time limit {} asked; {} allows {} (MaxWall)", fit_time_words(job.time_s), wall_from,
                                 fit_time_words(*max_wall)));
  }

  void partition_never(const PartitionLimits& p) {
    std::string whose = "partition " + p.name;
    if (p.max_time_s && job.time_s > *p.max_time_s)
      never("time", fmt::format("time limit {} asked; {} allows {} (MaxTime)", fit_time_words(job.time_s), whose,
                                 fit_time_words(*p.max_time_s)));
    if (p.max_nodes && job.nodes > *p.max_nodes)
      never("nodes", fmt::format("{} asked; {} allows {} per job (MaxNodes)", tres_words("node", job.nodes), whose,
                                  tres_words("node", *p.max_nodes)));
    if (!f.account.empty() && ((!p.allow_accounts.empty() && !contains(p.allow_accounts, f.account)) ||
                               contains(p.deny_accounts, f.account)))
      never("account", fmt::format("{} does not take jobs of account {} ({}{})", whose, f.account,
                                   p.allow_accounts.empty() ? "DenyAccounts" : "AllowAccounts=",
                                   join_words(p.allow_accounts)));
    if (!f.qos.empty() && ((!p.allow_qos.empty() && !contains(p.allow_qos, f.qos)) || contains(p.deny_qos, f.qos)))
      never("qos", fmt::format("{} does not take jobs of QOS {} ({}{})", whose, f.qos,
                               p.allow_qos.empty() ? "DenyQos" : "AllowQos=", join_words(p.allow_qos)));
  }

  // Usage now: what holds the job until other jobs end.
  void usage_now(const std::vector<const AssocLimits*>& levels, const QosLimits* q) {
    const Usage& u = site.usage;
    if (!u.known) return;
    Tres ask = job_tres(job);
    auto grp = [&](const Tres& limit, const Tres& used, const std::string& scope, bool per_user,
                   const std::string& whose_use) {
      for (const auto& [name, value] : limit) {
        auto a = ask.find(name);
        if (a == ask.end() || a->second > value) continue;  // never: said above
        long long in_use = used.count(name) ? used.at(name) : 0;
        if (in_use + a->second <= value) continue;
        long long short_by = in_use + a->second - value;
        f.not_now.push_back(fmt::format("{}: {} {} of {}; this shape needs {}: it waits until {} {} free",
                                        usage_code(scope, name, per_user), whose_use, in_use, tres_words(name, value),
                                        a->second, tres_words(name, short_by), short_by == 1 ? "is" : "are"));
      }
    };
    for (const AssocLimits* a : levels) {
      if (!a->user.empty()) {
        auto jobs = u.account_jobs.find(a->account + "/" + a->user);
        if (a->max_jobs && jobs != u.account_jobs.end() && jobs->second + 1 > *a->max_jobs)
          f.not_now.push_back(fmt::format("AssocMaxJobsLimit: you run {} jobs with account {}, the most it allows; "
                                          "it waits until one ends",
                                          jobs->second, a->account));
        continue;
      }
      auto used = u.account_tres.find(a->account);
      grp(a->grp, used == u.account_tres.end() ? Tres{} : used->second, "Assoc", false,
          "account " + a->account + "'s group uses");
      auto jobs = u.account_jobs.find(a->account);
      if (a->grp_jobs && jobs != u.account_jobs.end() && jobs->second + 1 > *a->grp_jobs)
        f.not_now.push_back(fmt::format("AssocGrpJobsLimit: account {}'s group runs {} jobs, the most it allows; it "
                                        "waits until one ends",
                                        a->account, jobs->second));
    }
    if (!q) return;
    auto pick = [](const std::map<std::string, Tres>& m, const std::string& k) {
      auto it = m.find(k);
      return it == m.end() ? Tres{} : it->second;
    };
    auto count = [](const std::map<std::string, long long>& m, const std::string& k) {
      auto it = m.find(k);
      return it == m.end() ? 0LL : it->second;
    };
    grp(q->grp, pick(u.qos_tres, q->name), "QOS", false, "QOS " + q->name + " has in use");
    grp(q->max_per_user, pick(u.qos_user_tres, q->name), "QOS", true, "you use in QOS " + q->name);
    if (q->max_jobs_per_user && count(u.qos_user_jobs, q->name) + 1 > *q->max_jobs_per_user)
      f.not_now.push_back(fmt::format("QOSMaxJobsPerUserLimit: you run {} jobs in QOS {}, the most it allows; it "
                                      "waits until one ends",
                                      count(u.qos_user_jobs, q->name), q->name));
    if (q->grp_jobs && count(u.qos_jobs, q->name) + 1 > *q->grp_jobs)
      f.not_now.push_back(fmt::format("QOSGrpJobsLimit: QOS {} runs {} jobs, the most it allows; it waits until "
                                      "one ends",
                                      q->name, count(u.qos_jobs, q->name)));
    if (q->max_submit_per_user && count(u.qos_user_submit, q->name) + 1 > *q->max_submit_per_user)
      f.not_now.push_back(fmt::format("QOSMaxSubmitJobPerUserLimit: you have {} jobs queued or running in QOS {}, "
                                      "the most it allows: sbatch would refuse this one until one ends",
                                      count(u.qos_user_submit, q->name), q->name));
  }

  // Reservations on the nodes that fit: can the whole time limit run before
  // the next one, and if not, when and for how long.
  void reservations() {
    if (!job.reservation.empty() || job.fitting.empty()) return;
    long long limit = job.time_s;
    if (limit <= 0) {
      auto p = site.partitions.find(job.partition);
      if (p != site.partitions.end() && p->second.max_time_s) limit = *p->second.max_time_s;
    }
    if (limit <= 0) return;
    std::vector<const Reservation*> blocking;
    for (const auto& r : site.reservations) {
      if (r.end <= now) continue;
      // Its users and accounts may run in it only by naming it; other jobs may not use its nodes.
      bool touches = std::any_of(r.nodes.begin(), r.nodes.end(), [&](const std::string& n) { return contains(job.fitting, n); });
      if (touches) blocking.push_back(&r);
    }
    if (blocking.empty()) return;
    auto free_nodes = [&](long long from, long long to) {
      int n = 0;
      for (const auto& node : job.fitting) {
        bool taken = std::any_of(blocking.begin(), blocking.end(), [&](const Reservation* r) {
          return r->start < to && r->end > from && contains(r->nodes, node);
        });
        if (!taken) ++n;
      }
      return n;
    };
    if (free_nodes(now, now + limit) >= job.nodes) return;
    // The first reservation in the way names the problem.
    const Reservation* first = nullptr;
    for (const Reservation* r : blocking)
      if (r->start < now + limit && (!first || r->start < first->start)) first = r;
    f.reservation = first->name;
    std::vector<long long> starts = {now};
    for (const Reservation* r : blocking) starts.push_back(r->end);
    std::sort(starts.begin(), starts.end());
    for (long long t : starts)
      if (t >= now && free_nodes(t, t + limit) >= job.nodes) {
        f.earliest_start = t;
        break;
      }
    // The longest whole-minute limit that ends before the next reservation
    // starts, with half a minute to spare for the job's own start.
    std::vector<long long> ends;
    for (const Reservation* r : blocking)
      if (r->start > now) ends.push_back(r->start - now);
    std::sort(ends.rbegin(), ends.rend());
    for (long long d : ends) {
      if (d >= limit || free_nodes(now, now + d) < job.nodes) continue;
      long long fit = d / 60 * 60;
      if (d - fit < 30) fit -= 60;
      if (fit >= 60) f.fit_time_s = fit;
      break;
    }
    std::string what = fmt::format("reservation {}{} ({} to {})", first->name,
                                   first->maintenance() ? " (maintenance)" : "", clock_words(first->start, now),
                                   clock_words(first->end, now));
    std::string start_words = f.earliest_start ? fmt::format("it cannot start before {} (in {})",
                                                              clock_words(*f.earliest_start, now),
                                                              fit_time_words((*f.earliest_start - now + 59) / 60 * 60))
                                               : "no start is possible at this time limit among the reservations";
    f.later = fmt::format("{} holds the nodes that fit this shape before its {} time limit would end: {}", what,
                          fit_time_words(limit), start_words);
    if (f.fit_time_s)
      f.later += fmt::format("; --time {} or less starts now (--fit-time sets it; with requeue and checkpoints the "
                             "run goes on afterwards)",
                             fit_time_words(*f.fit_time_s));
    else if (first->start <= now)
      f.later += "; it is in progress, so no shorter time limit starts the job now";
  }
};

}  // namespace

Feasibility check_limits(const JobAsk& job, const SiteLimits& site, long long now) {
  Checker c{job, site, now, {}};
  c.f.account = job_account(job, site);
  c.f.qos = job_qos(job, site);
  std::vector<const AssocLimits*> levels = c.chain();
  const QosLimits* q = nullptr;
  if (auto it = site.qos.find(c.f.qos); it != site.qos.end()) q = &it->second;
  if (!site.limits_enforced) {
    // Not enforced: only what Slurm checks anyway (partitions, reservations).
    levels.clear();
    q = nullptr;
  }
  if (!levels.empty() && !levels.front()->user.empty() && !c.f.qos.empty() && !levels.front()->qos.empty() &&
      !contains(levels.front()->qos, c.f.qos))
    c.never("qos", fmt::format("QOS {} is not one your association with account {} may use; yours: {}", c.f.qos,
                               c.f.account, join_words(levels.front()->qos)));
  if (q) c.qos_never(*q);
  auto part = site.partitions.find(job.partition);
  if (part != site.partitions.end()) {
    c.partition_never(part->second);
    // A partition's own QOS applies on top of the job's.
    if (auto pq = site.qos.find(part->second.qos);
        site.limits_enforced && !part->second.qos.empty() && pq != site.qos.end() && pq->second.name != c.f.qos)
      c.qos_never(pq->second);
  }
  c.assoc_never(levels);
  c.usage_now(levels, q);
  c.reservations();
  Feasibility& f = c.f;
  f.kind = !f.never.empty()     ? Feasibility::Kind::Never
           : !f.not_now.empty() ? Feasibility::Kind::NotNow
           : !f.later.empty()   ? Feasibility::Kind::Later
                                : Feasibility::Kind::Ok;
  return f;
}

}  // namespace ddpctl
