#include "slurm/preempt_contract.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <set>
#include <sstream>

#include "base/text.hpp"
#include "base/values.hpp"

namespace ddpctl {

const char* const kPreemptQosFormat = "Name,Preempt,PreemptMode,GraceTime,PreemptExemptTime";

namespace {

// "GANG,SUSPEND" -> SUSPEND; "OFF", "GANG" alone -> OFF; "cluster": "".
std::string mode_of(const std::string& text) {
  std::string up;
  for (char c : text) up += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (up == "CLUSTER" || up.empty()) return "";
  for (const char* m : {"REQUEUE", "CANCEL", "SUSPEND"})
    if (up.find(m) != std::string::npos) return m;
  return "OFF";
}

bool is_none(const std::string& s) { return s.empty() || s == "(null)" || s == "N/A" || s == "NONE"; }

// "Key=Value Key=Value" (scontrol -o).
std::map<std::string, std::string> scontrol_fields(const std::string& line) {
  std::map<std::string, std::string> out;
  for (const auto& word : split_ws(line)) {
    auto eq = word.find('=');
    if (eq != std::string::npos) out[word.substr(0, eq)] = word.substr(eq + 1);
  }
  return out;
}

std::optional<long long> seconds_of_time(const std::string& s) {
  std::string problem;
  if (is_none(s)) return std::nullopt;
  return parse_slurm_time(s, &problem);
}

struct PartitionRead {
  std::string name, mode;
  long long tier = 1, grace_s = 0;
  std::set<std::string> nodes;
  bool all_nodes = false;
};

bool share_nodes(const PartitionRead& a, const PartitionRead& b) {
  if (a.all_nodes || b.all_nodes) return true;
  return std::any_of(a.nodes.begin(), a.nodes.end(), [&](const std::string& n) { return b.nodes.count(n) > 0; });
}

void read_partitions(const std::string& text, PreemptContract& c) {
  std::vector<PartitionRead> parts;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    auto f = scontrol_fields(line);
    if (!f.count("PartitionName")) continue;
    PartitionRead p;
    p.name = f["PartitionName"];
    std::string problem;
    if (auto t = parse_int(f["PriorityTier"], 0, 1LL << 32, &problem)) p.tier = *t;
    else c.unread.push_back(fmt::format("partition {}: PriorityTier {} is not a number", p.name, printable(f["PriorityTier"])));
    p.mode = mode_of(f["PreemptMode"]);
    if (p.mode.empty()) p.mode = c.cluster_mode;
    if (auto g = parse_int(f["GraceTime"], 0, 1LL << 32, &problem)) p.grace_s = *g;
    else if (!f["GraceTime"].empty())
      c.unread.push_back(fmt::format("partition {}: GraceTime {} is not seconds", p.name, printable(f["GraceTime"])));
    const std::string nodes = f["Nodes"];
    p.all_nodes = nodes == "ALL";
    if (!p.all_nodes && !is_none(nodes))
      for (const auto& n : expand_hostlist(nodes)) p.nodes.insert(n);
    parts.push_back(p);
  }
  for (const auto& p : parts) {
    if (p.mode == "OFF") continue;
    Preemptible e{"partition", p.name, p.mode, p.grace_s, std::nullopt, {}};
    for (const auto& q : parts)
      if (q.tier > p.tier && share_nodes(p, q)) e.by.push_back(q.name);
    if (!e.by.empty()) c.preemptible.push_back(e);
  }
}

void read_qos(const std::string& text, PreemptContract& c) {
  struct QosRead {
    std::string name, mode;
    std::vector<std::string> preempts;
    long long grace_s = 0;
    std::optional<long long> exempt_s;
  };
  std::vector<QosRead> all;
  std::istringstream in(text);
  size_t n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    if (trim(line).empty()) continue;
    auto f = split(trim(line), '|');
    if (f.size() < 5) {
      c.unread.push_back(fmt::format("sacctmgr show qos line {} ({}): {} field(s), 5 expected", n,
                                     printable(line, 120), f.size()));
      continue;
    }
    QosRead q;
    q.name = f[0];
    for (const auto& p : split(f[1], ','))
      if (!p.empty()) q.preempts.push_back(p);
    q.mode = mode_of(f[2]);
    if (q.mode.empty()) q.mode = c.cluster_mode;
    q.grace_s = seconds_of_time(f[3]).value_or(0);
    q.exempt_s = seconds_of_time(f[4]);
    all.push_back(q);
  }
  for (const auto& q : all) {
    if (q.mode == "OFF") continue;
    Preemptible e{"qos", q.name, q.mode, q.grace_s, q.exempt_s, {}};
    for (const auto& by : all)
      if (std::find(by.preempts.begin(), by.preempts.end(), q.name) != by.preempts.end()) e.by.push_back(by.name);
    if (!e.by.empty()) c.preemptible.push_back(e);
  }
}

std::string value_of(const std::map<std::string, std::string>& m, const std::string& key) {
  auto it = m.find(key);
  return it == m.end() ? "" : it->second;
}

}  // namespace

const Preemptible* PreemptContract::find(const std::string& kind, const std::string& name) const {
  for (const auto& p : preemptible)
    if (p.kind == kind && p.name == name) return &p;
  return nullptr;
}

PreemptContract read_preempt_contract(const std::map<std::string, std::string>& config,
                                      const std::string& partitions, const std::string& qos) {
  PreemptContract c;
  if (config.empty()) {
    c.unread.push_back("scontrol show config could not be read: the preemption contract is unknown");
    return c;
  }
  c.type = value_of(config, "PreemptType");
  if (c.type.empty()) c.type = "preempt/none";
  c.cluster_mode = mode_of(value_of(config, "PreemptMode"));
  if (c.cluster_mode.empty()) c.cluster_mode = "OFF";
  c.exempt_s = seconds_of_time(value_of(config, "PreemptExemptTime")).value_or(0);
  const std::string params = value_of(config, "PreemptParameters");
  const std::string ctld = value_of(config, "SlurmctldParameters");
  for (const auto& p : split(params, ','))
    if (trim(p) == "send_user_signal") c.user_signal = true, c.user_signal_setting = "PreemptParameters=send_user_signal";
  for (const auto& p : split(ctld, ','))
    if (trim(p) == "preempt_send_user_signal")
      c.user_signal = true, c.user_signal_setting = "SlurmctldParameters=preempt_send_user_signal";
  if (!c.preempts()) return c;
  if (c.type == "preempt/partition_prio") read_partitions(partitions, c);
  if (c.type == "preempt/qos") read_qos(qos, c);
  return c;
}

std::string describe_preemption(const PreemptContract& c, const Preemptible& p) {
  std::string then = p.mode == "REQUEUE" ? "requeued" : p.mode == "CANCEL" ? "cancelled" : "suspended";
  if (p.mode == "SUSPEND")
    return fmt::format("suspended while a job of {} runs (SIGSTOP, no grace), then resumed", join(p.by, ", "));
  return fmt::format("preempted by a job of {} with {}, {} s grace, then {}", join(p.by, ", "),
                     c.user_signal ? "its --signal (the site sends the user signal)" : "SIGTERM", p.grace_s, then);
}

}  // namespace ddpctl
