#include "slurm/site_limits.hpp"

#include <ctime>
#include <fmt/format.h>
#include <set>

namespace ddpctl {

namespace {

// The user's association with `account`: the one for `partition` if the
// site has one, else the one for every partition.
const AssocLimits* user_assoc(const SiteLimits& site, const std::string& account, const std::string& partition) {
  if (site.user.empty()) return nullptr;
  const AssocLimits* mine = nullptr;
  for (const auto& a : site.assocs)
    if (a.account == account && a.user == site.user) {
      if (!a.partition.empty() && a.partition == partition) return &a;
      if (a.partition.empty()) mine = &a;
    }
  return mine;
}

}  // namespace

std::vector<const AssocLimits*> assoc_chain(const SiteLimits& site, const std::string& account_name,
                                            const std::string& partition) {
  std::vector<const AssocLimits*> out;
  if (const AssocLimits* mine = user_assoc(site, account_name, partition)) out.push_back(mine);
  std::string account = account_name;
  std::set<std::string> seen;
  while (!account.empty() && seen.insert(account).second) {
    const AssocLimits* acct = nullptr;
    for (const auto& a : site.assocs)
      if (a.account == account && a.user.empty()) acct = &a;
    if (!acct) break;
    out.push_back(acct);
    account = acct->parent;
  }
  return out;
}

std::string job_account(const JobAsk& job, const SiteLimits& site) {
  return job.account.empty() ? site.default_account : job.account;
}

std::string job_qos(const JobAsk& job, const SiteLimits& site) {
  if (!job.qos.empty()) return job.qos;
  const AssocLimits* mine = user_assoc(site, job_account(job, site), job.partition);
  if (mine && !mine->default_qos.empty()) return mine->default_qos;
  // Slurm's default when none is set: the association's only QOS, else "normal".
  if (mine && mine->qos.size() == 1) return mine->qos.front();
  return site.qos.count("normal") || site.qos.empty() ? "normal" : "";
}

std::string join_words(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

std::string clock_words(long long t, long long now) {
  std::time_t tt = static_cast<std::time_t>(t), tn = static_cast<std::time_t>(now);
  std::tm a = *std::localtime(&tt);
  std::tm b = *std::localtime(&tn);
  char buf[32];
  std::strftime(buf, sizeof buf, a.tm_yday == b.tm_yday && a.tm_year == b.tm_year ? "%H:%M" : "%b %d %H:%M", &a);
  return buf;
}

std::string tres_words(const std::string& name, long long value) {
  auto plural = [&](const char* one, const char* many) { return fmt::format("{} {}", value, value == 1 ? one : many); };
  if (name == "gres/gpu") return plural("GPU", "GPUs");
  if (name == "cpu") return plural("CPU", "CPUs");
  if (name == "node") return plural("node", "nodes");
  if (name == "mem") return fmt::format("{} MiB of memory", value);
  return fmt::format("{}={}", name, value);
}

namespace {

std::string tres_text(const Tres& t) {
  std::string out;
  for (const auto& [k, v] : t) out += (out.empty() ? "" : ",") + k + "=" + std::to_string(v);
  return out;
}

void add(std::vector<std::string>& parts, const char* name, const Tres& t) {
  if (!t.empty()) parts.push_back(std::string(name) + " " + tres_text(t));
}

void add(std::vector<std::string>& parts, const char* name, const std::optional<long long>& n, bool time = false) {
  if (n) parts.push_back(std::string(name) + " " + (time ? fit_time_words(*n) : std::to_string(*n)));
}

}  // namespace

std::string describe_limits(const QosLimits& q) {
  std::vector<std::string> parts;
  add(parts, "MaxTRESPerJob", q.max_per_job);
  add(parts, "MaxTRESPerNode", q.max_per_node);
  add(parts, "MaxTRESPerUser", q.max_per_user);
  add(parts, "GrpTRES", q.grp);
  add(parts, "MaxWall", q.max_wall_s, true);
  add(parts, "MaxJobsPerUser", q.max_jobs_per_user);
  add(parts, "MaxSubmitJobsPerUser", q.max_submit_per_user);
  add(parts, "GrpJobs", q.grp_jobs);
  add(parts, "GrpSubmitJobs", q.grp_submit);
  return parts.empty() ? "no limits" : join_words(parts);
}

std::string describe_limits(const AssocLimits& a) {
  std::vector<std::string> parts;
  add(parts, "GrpTRES", a.grp);
  add(parts, "MaxTRES", a.max_per_job);
  add(parts, "MaxTRESPerNode", a.max_per_node);
  add(parts, "MaxWall", a.max_wall_s, true);
  add(parts, "MaxJobs", a.max_jobs);
  add(parts, "MaxSubmit", a.max_submit);
  add(parts, "GrpJobs", a.grp_jobs);
  add(parts, "GrpSubmit", a.grp_submit);
  return parts.empty() ? "no limits" : join_words(parts);
}

std::string describe_reservation(const Reservation& r, long long now) {
  return fmt::format("{}{} {} to {} on {} node{}{}", r.name, r.maintenance() ? " (maintenance)" : "",
                     clock_words(r.start, now), clock_words(r.end, now), r.nodes.size(), r.nodes.size() == 1 ? "" : "s",
                     r.start <= now ? " (in progress)" : "");
}

}  // namespace ddpctl
