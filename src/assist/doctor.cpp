#include "assist/doctor.hpp"

#include <algorithm>
#include <ctime>
#include <fmt/format.h>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "remote/remote.hpp"
#include "slurm/preempt_contract.hpp"
#include "slurm/site_limits_read.hpp"
#include "slurm/slurm_answer.hpp"
#include "slurm/slurm_parse_jobs.hpp"
#include "base/text.hpp"
#include "base/values.hpp"

namespace ddpctl {

namespace {

std::string yaml_key(const std::string& s) {
  bool plain = !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
  return plain ? s : "\"" + s + "\"";
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// `preemptible: {...}` of a partition or QOS, as the profile reads it.
std::string preempt_terms_yaml(const Preemptible& p) {
  std::string s = fmt::format("preemptible: {{mode: {}, grace_time: {}", lower(p.mode), p.grace_s);
  if (p.exempt_s) s += fmt::format(", exempt_time: {}", *p.exempt_s);
  std::vector<std::string> by;
  for (const auto& b : p.by) by.push_back(yaml_key(b));
  return s + ", by: [" + join(by, ", ") + "]}";
}

std::string draft_profile(const std::string& version, const std::string& now_iso, const std::string& cluster_name,
                          const std::map<std::string, PartitionFacts>& parts, const std::set<std::string>& all_types,
                          const std::vector<std::string>& limits, const PreemptContract& preempt) {
  std::ostringstream y;
  y << fmt::format("# Cluster profile drafted by `ddpctl doctor` from Slurm {} on {}.\n", version, now_iso);
  y << "# Check it: node sizes are the smallest node of each partition, and the\n"
       "# fabric interface cannot be seen from here (run `ip -4 addr` on a compute node).\n";
  y << "name: " << yaml_key(cluster_name) << "\n";
  y << "description: " << yaml_key(cluster_name) << " (drafted by ddpctl doctor)\n";
  y << "gpu_request: gres\n";
  for (const auto& [name, f] : parts)
    if (f.is_default) {
      y << "default_partition: " << yaml_key(name) << "\n";
      if (!f.default_time.empty())
        y << "default_time: \"" << f.default_time << "\"\n";
      else
        y << "# default_time: \"01:00:00\"  (Slurm sets none; without it every spec needs time:)\n";
    }
  y << "# interface: ib0\n";
  if (!all_types.empty()) {
    y << "gpu_types:\n";
    for (const auto& t : all_types) y << fmt::format("  {}: {{gres: {}}}\n", yaml_key(t), yaml_key(t));
  }
  y << "partitions:\n";
  y << "  # Each partition's all-reduce bandwidth across nodes (busbw_gbs; plan's\n"
       "  # communication floor): `ddpctl calibrate PARTITION --profile THIS_FILE --write`\n"
       "  # measures it on the partition's nodes and writes it here.\n";
  for (const auto& [name, f] : parts) {
    int gpus = std::max(f.min_gpus, 0);
    y << fmt::format("  {}: {{nodes: {}, gpus_per_node: {}", yaml_key(name), f.nodes, gpus);
    if (gpus > 0 && !f.gpu_types.empty())
      y << ", gpu_types: [" << join({f.gpu_types.begin(), f.gpu_types.end()}, ", ") << "]";
    if (f.min_cpus > 0) y << ", cpus_per_node: " << f.min_cpus;
    if (f.min_mem > 0) y << ", mem_per_node: " << f.min_mem << "M";
    if (!f.max_time.empty()) y << ", max_time: \"" << f.max_time << "\"";
    if (const Preemptible* p = preempt.find("partition", name)) y << ", " << preempt_terms_yaml(*p);
    y << "}\n";
  }
  if (preempt.preempts()) {
    y << "# Preemption, as Slurm said it (docs/profiles.md \"Preemption\"): a preempted job\n"
         "# gets " << (preempt.user_signal ? "its --signal" : "SIGTERM") << ", grace_time seconds to end, then SIGKILL;\n"
         "# no job is preempted before it ran exempt_time seconds.\n";
    y << fmt::format("preemption: {{type: {}, exempt_time: {}, user_signal: {}}}\n", preempt.type, preempt.exempt_s,
                     preempt.user_signal ? "true" : "false");
    bool any_qos = false;
    for (const auto& p : preempt.preemptible)
      if (p.kind == "qos") {
        if (!any_qos) y << "qos:\n";
        any_qos = true;
        y << fmt::format("  {}: {{{}}}\n", yaml_key(p.name), preempt_terms_yaml(p));
      }
  }
  if (!limits.empty()) {
    y << "# The limits and reservations that applied to you when this was drafted\n"
         "# (ddpctl submit reads them live before each submission):\n";
    for (const auto& l : limits) y << "#   " << l << "\n";
  }
  return y.str();
}

void add_check(SiteReport& report, const std::string& what, bool ok, const std::string& detail) {
  report.checks.push_back({what, ok, detail});
}

// Which reader the document's own meta picks (slurm_answer.hpp), and how
// status asks for the runs' jobs (SlurmClient::jobs): Slurm filters by
// --jobs in --json from 23.02; 22.05 lists every job whatever it is asked.
void probe_queue(SlurmClient& slurm, SiteReport& report) {
  CommandResult sq = slurm.raw({"squeue", "--json", "--states=all"});
  std::string detail = "not available (" + sq.describe() + "); status uses squeue -o instead";
  bool json_ok = false;
  if (sq.ok()) try {
      parse_squeue_json(sq.out);
      detail = "readable: " + json_source(nlohmann::json::parse(sq.out), "squeue --json").describe();
      json_ok = true;
    } catch (const SlurmAnswerError& e) {
      detail = std::string("Slurm answered with an error: ") + e.what();
    } catch (const std::exception& e) {
      detail = std::string(e.what()) + "; status uses squeue -o instead";
    }
  add_check(report, "squeue --json", json_ok, detail);
  if (!json_ok) return;
  std::vector<Job> all = parse_squeue_json(sq.out);
  std::string how;
  if (all.size() >= 2) {
    slurm.jobs({all.front().id});
    how = slurm.json_ignores_jobs()
              ? "squeue -o --jobs=ID,... (this Slurm's --json lists every job whatever it is asked)"
              : "squeue --json --jobs=ID,... (Slurm filters: the cost follows your runs, not the queue)";
  } else {
    how = "squeue --json --jobs=ID,... (whether this Slurm filters --json shows once two jobs are queued)";
  }
  add_check(report, "status asks for its jobs with", true, how);
}

// sacct and MinJobAge; returns the profile's name: `name`, else Slurm's
// ClusterName, else "mysite".
std::string probe_accounting(SlurmClient& slurm, const std::string& name, SiteReport& report) {
  JobQuery acct = slurm.accounting({}, static_cast<long long>(std::time(nullptr)) - 60);
  add_check(report, "sacct (accounting)", acct.answered,
            acct.answered ? "available: finished jobs stay visible" : "unavailable (" + acct.error + ")");
  auto config = slurm.config();
  std::string min_job_age = config.count("MinJobAge") ? config["MinJobAge"] : "?";
  add_check(report, "MinJobAge", !config.empty(),
            min_job_age + (acct.answered ? "" : " (how long squeue remembers ended jobs)"));
  std::string cluster_name = config.count("ClusterName") ? config["ClusterName"] : "";
  if (!name.empty()) cluster_name = name;
  if (cluster_name.empty()) cluster_name = "mysite";
  return cluster_name;
}

// The limits a submission is checked against (site_limits.hpp), each a check;
// returns those that limit anything, as the draft notes them.
std::vector<std::string> probe_limits(SlurmClient& slurm, SiteReport& report) {
  SiteLimits site = read_site_limits(slurm);
  long long now = static_cast<long long>(std::time(nullptr));
  std::vector<std::string> seen;
  std::set<std::string> usable;
  for (const auto& a : site.assocs) {
    if (a.user.empty()) continue;
    std::string what = fmt::format("association {}{}", a.account, a.partition.empty() ? "" : " (" + a.partition + ")");
    std::string text = fmt::format("QOS {}{}; {}", a.qos.empty() ? "-" : join(a.qos, ","),
                                   a.default_qos.empty() ? "" : " (default " + a.default_qos + ")", describe_limits(a));
    add_check(report, what, true, text);
    seen.push_back(what + ": " + text);
    for (const auto& q : a.qos) usable.insert(q);
  }
  for (const auto& a : site.assocs)
    if (a.user.empty() && describe_limits(a) != "no limits") {
      add_check(report, "account " + a.account, true, describe_limits(a));
      seen.push_back("account " + a.account + ": " + describe_limits(a));
    }
  for (const auto& [qname, q] : site.qos)
    if (usable.empty() || usable.count(qname)) {
      add_check(report, "QOS " + qname, true, describe_limits(q));
      if (describe_limits(q) != "no limits") seen.push_back("QOS " + qname + ": " + describe_limits(q));
    }
  bool any_reservation = false;
  for (const auto& r : site.reservations)
    if (r.end > now) {
      any_reservation = true;
      add_check(report, "reservation " + r.name, true, describe_reservation(r, now));
      seen.push_back("reservation " + describe_reservation(r, now));
    }
  if (!any_reservation && site.accounting) add_check(report, "reservations", true, "none ahead");
  for (const auto& u : site.unread) add_check(report, "limits", false, "cannot read " + u);
  return seen;
}

// The preemption contract (preempt_contract.hpp): a check per partition or
// QOS whose jobs can be preempted, saying what a preemption does to them.
PreemptContract probe_preemption(SlurmClient& slurm, SiteReport& report) {
  std::map<std::string, std::string> config = slurm.config();
  CommandResult parts = slurm.raw({"scontrol", "-o", "show", "partition"});
  std::string qos;
  if (config.count("PreemptType") && config.at("PreemptType") == "preempt/qos") {
    CommandResult q = slurm.raw({"sacctmgr", "-n", "-P", "show", "qos", std::string("format=") + kPreemptQosFormat});
    if (q.ok()) qos = q.out;
    else add_check(report, "preemption", false, "cannot read the QOS's preemption (sacctmgr show qos): " + q.describe());
  }
  PreemptContract c = read_preempt_contract(config, parts.ok() ? parts.out : "", qos);
  if (!parts.ok()) c.unread.push_back("scontrol show partition: " + parts.describe());
  for (const auto& u : c.unread) add_check(report, "preemption", false, "cannot read " + u);
  if (!c.preempts()) {
    add_check(report, "preemption", true,
              fmt::format("none ({}, PreemptMode={}): no job here is preempted", c.type, c.cluster_mode));
    return c;
  }
  add_check(report, "preemption", true,
            fmt::format("{}, PreemptMode={}, exempt for {} s, {}", c.type, c.cluster_mode, c.exempt_s,
                        c.user_signal ? "the user signal is sent at preemption (" + c.user_signal_setting + ")"
                                      : "SIGTERM at preemption (no send_user_signal)"));
  for (const auto& p : c.preemptible)
    add_check(report, p.kind + " " + p.name, true, "preemptible: " + describe_preemption(c, p));
  return c;
}

}  // namespace

std::map<std::string, PartitionFacts> partition_facts(const std::vector<NodeInfo>& nodes,
                                                      const std::string& sinfo_times) {
  std::map<std::string, PartitionFacts> parts;
  for (const auto& n : nodes)
    for (const auto& p : n.partitions) {
      PartitionFacts& f = parts[p];
      f.nodes++;
      f.min_cpus = f.min_cpus == 0 ? n.cpus : std::min(f.min_cpus, n.cpus);
      f.min_mem = f.min_mem == 0 ? n.memory_mib : std::min(f.min_mem, n.memory_mib);
      f.min_gpus = f.min_gpus < 0 ? n.total_gpus() : std::min(f.min_gpus, n.total_gpus());
      for (const auto& [type, count] : n.gpus_by_type)
        if (!type.empty() && count > 0) f.gpu_types.insert(type);
      for (const auto& feat : n.features) f.features.insert(feat);
    }
  std::istringstream lines(sinfo_times);
  for (std::string line; std::getline(lines, line);) {
    auto bar = line.find('|');
    if (bar == std::string::npos) continue;
    std::string partition = line.substr(0, bar);
    bool is_default = !partition.empty() && partition.back() == '*';
    if (is_default) partition.pop_back();
    if (!parts.count(partition)) continue;
    parts[partition].is_default = is_default;
    std::string rest = line.substr(bar + 1), max_time = rest.substr(0, rest.find('|'));
    std::string default_time = rest.find('|') == std::string::npos ? "" : rest.substr(rest.find('|') + 1);
    std::string problem;
    if (parse_slurm_time(max_time, &problem)) parts[partition].max_time = max_time;
    if (parse_slurm_time(default_time, &problem)) parts[partition].default_time = default_time;
  }
  return parts;
}

SiteReport diagnose_site(SlurmClient& slurm, const std::string& name, const std::string& now_iso) {
  SiteReport report;
  std::string error;
  std::string version = slurm.version(&error);
  add_check(report, "Slurm version", !version.empty(), version.empty() ? error : version);
  if (version.empty()) {
    report.fatal = "Slurm's commands do not work here (" + error + "); is this a login node?";
    return report;
  }
  probe_queue(slurm, report);
  std::string cluster_name = probe_accounting(slurm, name, report);

  NodeQuery nodes = slurm.nodes();
  add_check(report, "nodes", nodes.answered,
            nodes.answered ? fmt::format("{} nodes, read from {} of {}", nodes.nodes.size(), nodes.reader, nodes.source)
                           : nodes.error);
  if (!nodes.answered) {
    report.fatal = "cannot list the nodes: " + nodes.error;
    return report;
  }
  std::map<std::string, PartitionFacts> parts =
      partition_facts(nodes.nodes, slurm.raw({"sinfo", "-h", "-o", "%P|%l|%L"}).out);
  std::set<std::string> all_types;
  for (const auto& [pname, f] : parts) {
    all_types.insert(f.gpu_types.begin(), f.gpu_types.end());
    add_check(report, "partition " + pname, true,
              fmt::format("{} nodes, {} CPUs, {} GPUs{}{}", f.nodes, f.min_cpus, std::max(f.min_gpus, 0),
                          f.gpu_types.empty() ? "" : " (" + join({f.gpu_types.begin(), f.gpu_types.end()}, ",") + ")",
                          f.features.empty() ? "" : ", features " + join({f.features.begin(), f.features.end()}, ",")));
  }
  auto accounts = slurm.user_accounts();
  add_check(report, "accounts", accounts.has_value(), accounts ? join(*accounts, ", ") : "sacctmgr cannot list them");
  std::vector<std::string> seen = probe_limits(slurm, report);
  PreemptContract preempt = probe_preemption(slurm, report);
  report.profile_yaml = draft_profile(version, now_iso, cluster_name, parts, all_types, seen, preempt);
  return report;
}

SiteReport diagnose_remote_site(RemoteSession& session, const std::string& name, const std::string& now_iso,
                                std::vector<std::string>& said) {
  SlurmClient remote_slurm(session.ssh());
  SiteReport site = diagnose_site(remote_slurm, name, now_iso);
  // The job's side of ddpctl must be this version (remote.hpp): which one the cluster has.
  const std::string& host = session.target().host;
  RemoteDdpctl job_side =
      choose_remote_ddpctl(probe_remote(session.ssh(), host, session.target().version), session.target().version);
  said.push_back(fmt::format("ddpctl: asked {} through {}: {} ssh call(s)", host, session.connection().describe(),
                             session.ssh().calls()));
  said.push_back(fmt::format("ddpctl: ddpctl on {}: {}", host, job_side.text));
  return site;
}

}  // namespace ddpctl
