#include "slurm/site_limits_read.hpp"

#include <ctime>
#include <fmt/format.h>
#include <set>
#include <sstream>
#include <unistd.h>

#include "base/text.hpp"
#include "base/values.hpp"

namespace ddpctl {

const char* const kQosFormat =
    "Name,MaxTRESPerJob,MaxTRESPerNode,MaxTRESPerUser,GrpTRES,MaxWall,MaxJobsPerUser,MaxSubmitJobsPerUser,GrpJobs,"
    "GrpSubmitJobs,Flags";
const char* const kAssocFormat =
    "Account,User,Partition,ParentName,QOS,DefaultQOS,GrpTRES,MaxTRES,MaxTRESPerNode,MaxWall,MaxJobs,MaxSubmit,"
    "GrpJobs,GrpSubmit";

namespace {

std::optional<long long> number(const std::string& s) {
  std::string problem;
  if (s.empty()) return std::nullopt;
  return parse_int(s, 0, (1LL << 53), &problem);
}

std::optional<long long> wall(const std::string& s) {
  std::string problem;
  if (s.empty() || s == "UNLIMITED" || s == "INFINITE") return std::nullopt;
  return parse_slurm_time(s, &problem);
}

// What a line of sacctmgr's that cannot be read becomes: a note in
// SiteLimits::unread (never "no limit" in silence: a format change would
// read as a site without limits).
struct LineNotes {
  std::vector<std::string>* unread;
  std::string what;  // "sacctmgr show qos"
  void add(size_t line, const std::string& text, const std::string& why) const {
    if (unread) unread->push_back(fmt::format("{} line {} ({}): {}", what, line, printable(text, 120), why));
  }
  // The fields of a line, or nullopt (noted) when there are fewer than `n`.
  std::optional<std::vector<std::string>> fields(size_t line, const std::string& text, size_t n) const {
    auto f = split(trim(text), '|');
    if (f.size() >= n) return f;
    add(line, text, fmt::format("{} field(s), {} expected", f.size(), n));
    return std::nullopt;
  }
  // A time limit; one that is not a time is noted and left unchecked.
  std::optional<long long> time(size_t line, const std::string& text, const std::string& field,
                                const std::string& value) const {
    auto t = wall(value);
    if (!t && !value.empty() && value != "UNLIMITED" && value != "INFINITE")
      add(line, text, fmt::format("{} {} is not a time", field, printable(value)));
    return t;
  }
};

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!trim(line).empty()) out.push_back(line);
  return out;
}

// "Key=Value Key=Value" (scontrol -o): values run to the next " Key=".
std::map<std::string, std::string> fields_of(const std::string& line) {
  std::map<std::string, std::string> out;
  for (const auto& word : split_ws(line)) {
    auto eq = word.find('=');
    if (eq == std::string::npos) continue;
    out[word.substr(0, eq)] = word.substr(eq + 1);
  }
  return out;
}

// A list field of scontrol's: "ALL", "(null)" and "N/A" mean none.
std::vector<std::string> names(const std::string& s) {
  if (s.empty() || s == "ALL" || s == "(null)" || s == "N/A") return {};
  std::vector<std::string> out;
  for (const auto& n : split(s, ','))
    if (!n.empty()) out.push_back(n);
  return out;
}

// Unix seconds (SLURM_TIME_FORMAT=%s), else scontrol's local ISO time.
long long time_of(const std::string& s) {
  if (auto n = number(s)) return *n;
  std::tm tm{};
  if (sscanf(s.c_str(), "%d-%d-%dT%d:%d:%d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
             &tm.tm_sec) != 6)
    return 0;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  tm.tm_isdst = -1;
  return static_cast<long long>(std::mktime(&tm));
}

// "cpu=N(1),gres/gpu=3(1)" (assoc_mgr): the usage in parentheses.
Tres usage_of(const std::string& s) {
  Tres out;
  for (const auto& item : split(s, ',')) {
    auto eq = item.find('='), open = item.find('('), close = item.find(')');
    if (eq == std::string::npos || open == std::string::npos || close == std::string::npos || close < open) continue;
    if (auto n = number(item.substr(open + 1, close - open - 1))) out[item.substr(0, eq)] = *n;
  }
  return out;
}

// "N(1)" -> 1.
std::optional<long long> used_count(const std::string& s) {
  auto open = s.find('('), close = s.find(')');
  if (open == std::string::npos || close == std::string::npos || close < open) return std::nullopt;
  return number(s.substr(open + 1, close - open - 1));
}

// "root(0)" -> "root".
std::string without_id(const std::string& s) { return s.substr(0, s.find('(')); }

}  // namespace

Tres parse_tres(const std::string& text) {
  Tres out;
  for (const auto& item : split(trim(text), ',')) {
    auto eq = item.find('=');
    if (eq == std::string::npos) continue;
    std::string name = item.substr(0, eq), value = item.substr(eq + 1), problem;
    // Typed limits (gres/gpu:a100) stay under their own name: they bind only
    // jobs asking for that type.
    if (name == "mem") {
      if (auto mib = parse_memory_mib(value, &problem)) out[name] = *mib;
    } else if (auto n = number(value)) {
      out[name] = *n;
    }
  }
  return out;
}

std::map<std::string, QosLimits> parse_qos(const std::string& text, std::vector<std::string>* unread) {
  std::map<std::string, QosLimits> out;
  LineNotes notes{unread, "sacctmgr show qos"};
  std::vector<std::string> lines = lines_of(text);
  for (size_t i = 0; i < lines.size(); i++) {
    const std::string& line = lines[i];
    auto fields = notes.fields(i + 1, line, 11);
    if (!fields || (*fields)[0].empty()) continue;
    const auto& f = *fields;
    QosLimits q;
    q.name = f[0];
    q.max_per_job = parse_tres(f[1]);
    q.max_per_node = parse_tres(f[2]);
    q.max_per_user = parse_tres(f[3]);
    q.grp = parse_tres(f[4]);
    q.max_wall_s = notes.time(i + 1, line, "MaxWall", f[5]);
    q.max_jobs_per_user = number(f[6]);
    q.max_submit_per_user = number(f[7]);
    q.grp_jobs = number(f[8]);
    q.grp_submit = number(f[9]);
    q.flags = f[10];
    out[q.name] = q;
  }
  return out;
}

std::vector<AssocLimits> parse_assocs(const std::string& text, std::vector<std::string>* unread) {
  std::vector<AssocLimits> out;
  LineNotes notes{unread, "sacctmgr show assoc"};
  std::vector<std::string> lines = lines_of(text);
  for (size_t i = 0; i < lines.size(); i++) {
    const std::string& line = lines[i];
    auto fields = notes.fields(i + 1, line, 14);
    if (!fields || (*fields)[0].empty()) continue;
    const auto& f = *fields;
    AssocLimits a;
    a.account = f[0];
    a.user = f[1];
    a.partition = f[2];
    a.parent = f[3];
    a.qos = names(f[4]);
    a.default_qos = f[5];
    a.grp = parse_tres(f[6]);
    a.max_per_job = parse_tres(f[7]);
    a.max_per_node = parse_tres(f[8]);
    a.max_wall_s = notes.time(i + 1, line, "MaxWall", f[9]);
    a.max_jobs = number(f[10]);
    a.max_submit = number(f[11]);
    a.grp_jobs = number(f[12]);
    a.grp_submit = number(f[13]);
    out.push_back(a);
  }
  return out;
}

std::map<std::string, PartitionLimits> parse_partitions(const std::string& text) {
  std::map<std::string, PartitionLimits> out;
  for (const auto& line : lines_of(text)) {
    auto f = fields_of(line);
    if (!f.count("PartitionName")) continue;
    PartitionLimits p;
    p.name = f["PartitionName"];
    p.max_time_s = wall(f["MaxTime"]);
    p.max_nodes = number(f["MaxNodes"]);
    p.allow_accounts = names(f["AllowAccounts"]);
    p.deny_accounts = names(f["DenyAccounts"]);
    p.allow_qos = names(f["AllowQos"]);
    p.deny_qos = names(f["DenyQos"]);
    p.qos = f["QoS"] == "N/A" || f["QoS"] == "(null)" ? "" : f["QoS"];
    p.is_default = f["Default"] == "YES";
    out[p.name] = p;
  }
  return out;
}

std::vector<Reservation> parse_reservations(const std::string& text) {
  std::vector<Reservation> out;
  for (const auto& line : lines_of(text)) {
    auto f = fields_of(line);
    if (!f.count("ReservationName")) continue;
    Reservation r;
    r.name = f["ReservationName"];
    r.start = time_of(f["StartTime"]);
    r.end = time_of(f["EndTime"]);
    std::string nodes = f["Nodes"];
    if (nodes != "(null)" && !nodes.empty()) r.nodes = expand_hostlist(nodes);
    r.users = names(f["Users"]);
    r.accounts = names(f["Accounts"]);
    r.flags = f["Flags"];
    out.push_back(r);
  }
  return out;
}

Usage parse_assoc_mgr(const std::string& text, const std::string& uid) {
  Usage u;
  enum { None, Assoc, Qos } record = None;
  enum { Own, Accounts, Users } section = Own;
  std::string key;       // the account (or account/user) or QOS
  bool mine = false;     // in a QOS's User Limits: this user's entry
  for (const auto& raw : lines_of(text)) {
    std::string line = trim(raw);
    if (line.rfind("ClusterName=", 0) == 0) {
      auto f = fields_of(line);
      std::string user = without_id(f["UserName"]);
      key = user.empty() ? f["Account"] : f["Account"] + "/" + user;
      record = Assoc, section = Own;
      continue;
    }
    if (line.rfind("QOS=", 0) == 0 && raw.rfind("QOS=", 0) == 0) {
      key = without_id(line.substr(4));
      record = Qos, section = Own;
      continue;
    }
    if (line == "Account Limits") { section = Accounts; continue; }
    if (line == "User Limits") { section = Users; mine = false; continue; }
    if (record == None) continue;
    if (line.find('=') == std::string::npos) {
      // A QOS's account or user entry: "limited", "0" or "root(0)".
      if (section == Users) mine = line == uid || line.find("(" + uid + ")") != std::string::npos;
      continue;
    }
    auto f = fields_of(line);
    if (record == Assoc) {
      if (f.count("GrpJobs")) if (auto n = used_count(f["GrpJobs"])) u.account_jobs[key] = *n;
      if (f.count("GrpSubmitJobs")) if (auto n = used_count(f["GrpSubmitJobs"])) u.account_submit[key] = *n;
      if (f.count("GrpTRES") && key.find('/') == std::string::npos) u.account_tres[key] = usage_of(f["GrpTRES"]);
    } else if (section == Own) {
      if (f.count("GrpJobs")) if (auto n = used_count(f["GrpJobs"])) u.qos_jobs[key] = *n;
      if (f.count("GrpSubmitJobs")) if (auto n = used_count(f["GrpSubmitJobs"])) u.qos_submit[key] = *n;
      if (f.count("GrpTRES")) u.qos_tres[key] = usage_of(f["GrpTRES"]);
    } else if (section == Users && mine) {
      if (f.count("MaxJobsPU")) if (auto n = used_count(f["MaxJobsPU"])) u.qos_user_jobs[key] = *n;
      if (f.count("MaxSubmitJobsPU")) if (auto n = used_count(f["MaxSubmitJobsPU"])) u.qos_user_submit[key] = *n;
      if (f.count("MaxTRESPU")) u.qos_user_tres[key] = usage_of(f["MaxTRESPU"]);
    }
  }
  u.known = !u.account_tres.empty() || !u.qos_tres.empty();
  return u;
}

SiteLimits read_site_limits(SlurmClient& slurm) {
  SiteLimits site;
  uid_t uid = getuid();
  site.user = current_user();
  auto unread = [&](const std::string& what, const CommandResult& r) {
    site.unread.push_back(fmt::format("{} ({})", what, r.describe()));
  };

  CommandResult qos = slurm.raw({"sacctmgr", "-n", "-P", "show", "qos", std::string("format=") + kQosFormat});
  if (qos.ok()) {
    site.accounting = true;
    site.qos = parse_qos(qos.out, &site.unread);
    CommandResult user = slurm.raw({"sacctmgr", "-n", "-P", "show", "user", site.user, "format=DefaultAccount"});
    if (user.ok()) site.default_account = trim(user.out);
    CommandResult mine = slurm.raw(
        {"sacctmgr", "-n", "-P", "show", "assoc", "where", "user=" + site.user, std::string("format=") + kAssocFormat});
    if (mine.ok()) {
      site.assocs = parse_assocs(mine.out, &site.unread);
      // The accounts above, level by level, up to root.
      std::set<std::string> asked;
      std::vector<std::string> level;
      for (const auto& a : site.assocs) level.push_back(a.account);
      for (int depth = 0; depth < 16 && !level.empty(); ++depth) {
        std::vector<std::string> fresh;
        for (const auto& a : level)
          if (asked.insert(a).second) fresh.push_back(a);
        if (fresh.empty()) break;
        CommandResult up = slurm.raw({"sacctmgr", "-n", "-P", "show", "assoc", "where", "account=" + join(fresh, ","),
                                      std::string("format=") + kAssocFormat});
        if (!up.ok()) {
          unread("the accounts' limits: sacctmgr show assoc", up);
          break;
        }
        level.clear();
        for (const auto& a : parse_assocs(up.out, &site.unread))
          if (a.user.empty()) {
            site.assocs.push_back(a);
            if (!a.parent.empty()) level.push_back(a.parent);
          }
      }
    } else {
      unread("your associations: sacctmgr show assoc", mine);
    }
  } else {
    unread("QOS and association limits: sacctmgr", qos);
  }

  // What Slurm enforces: QOS and association limits only with "limits"
  // (or "safe", which implies it). A config that cannot be read: assume so.
  auto config = slurm.config();
  if (auto it = config.find("AccountingStorageEnforce"); it != config.end()) {
    site.enforce = it->second;
    site.limits_enforced =
        site.enforce.find("limits") != std::string::npos || site.enforce.find("safe") != std::string::npos;
  }
  CommandResult parts = slurm.raw({"scontrol", "-o", "show", "partition"});
  if (parts.ok()) site.partitions = parse_partitions(parts.out);
  else unread("partition limits: scontrol show partition", parts);

  CommandResult resv = slurm.raw({"env", "SLURM_TIME_FORMAT=%s", "scontrol", "-o", "show", "reservation"});
  if (resv.ok()) site.reservations = parse_reservations(resv.out);
  else if (resv.out.find("No reservations") == std::string::npos && resv.err.find("No reservations") == std::string::npos)
    unread("reservations: scontrol show reservation", resv);

  if (site.accounting) {
    std::set<std::string> accounts;
    for (const auto& a : site.assocs) accounts.insert(a.account);
    std::vector<std::string> argv = {"scontrol", "show", "assoc_mgr", "users=" + site.user, "flags=assoc,qos"};
    if (!accounts.empty()) argv.push_back("accounts=" + join({accounts.begin(), accounts.end()}, ","));
    CommandResult mgr = slurm.raw(argv);
    if (mgr.ok()) site.usage = parse_assoc_mgr(mgr.out, std::to_string(uid));
    else unread("current usage: scontrol show assoc_mgr", mgr);
  }
  return site;
}

std::vector<std::string> unread_limits(const SiteLimits& limits) {
  std::vector<std::string> out;
  if (limits.accounting && !limits.limits_enforced)
    out.push_back("QOS and association limits not checked: this Slurm does not enforce them "
                  "(AccountingStorageEnforce=" + limits.enforce + ")");
  for (const auto& u : limits.unread) out.push_back("limits not checked: cannot read " + u);
  return out;
}

}  // namespace ddpctl
