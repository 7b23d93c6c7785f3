// Parsers for what Slurm prints: squeue --json and its format string, sacct
// -P, sinfo --json, gres and TRES strings. Slurm 22.05's field names.
#include <cstdlib>
#include <ctime>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "slurm_parse.hpp"
#include "values.hpp"

namespace ddpctl {

namespace {

using nlohmann::json;

std::string str_field(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return "";
  if (it->is_string()) return it->get<std::string>();
  if (it->is_number_integer()) return std::to_string(it->get<long long>());
  return it->dump();
}

long long int_field(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return 0;
  if (it->is_number_integer()) return it->get<long long>();
  if (it->is_number_unsigned()) return static_cast<long long>(it->get<unsigned long long>());
  // Newer Slurm wraps numbers: {"set": true, "infinite": false, "number": N}.
  if (it->is_object() && it->value("set", false) && !it->value("infinite", false))
    return it->value("number", 0LL);
  return 0;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(s);
  while (std::getline(in, part, sep)) parts.push_back(part);
  if (!s.empty() && s.back() == sep) parts.emplace_back();
  return parts;
}

// "2026-11-22T08:11:57" in local time; "N/A", "Unknown", "None" -> 0.
long long parse_slurm_date(const std::string& s) {
  std::tm tm{};
  const char* end = strptime(s.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (!end || *end) return 0;
  tm.tm_isdst = -1;
  return static_cast<long long>(std::mktime(&tm));
}

long long parse_limit(const std::string& s) {
  std::string problem;
  if (s.empty() || s == "UNLIMITED" || s == "N/A" || s == "Partition_Limit") return 0;
  return parse_slurm_time(s, &problem).value_or(0);
}

int to_int(const std::string& s) {
  char* end = nullptr;
  long v = std::strtol(s.c_str(), &end, 10);
  return end && end != s.c_str() ? static_cast<int>(v) : 0;
}

// --json answers "exit 0, errors: [...]" when the controller cannot be asked.
void throw_json_errors(const json& doc) {
  auto it = doc.find("errors");
  if (it == doc.end() || !it->is_array() || it->empty()) return;
  const json& e = it->front();
  std::string what = e.value("description", "");
  std::string detail = e.value("error", "");
  std::string source = e.value("source", "");
  if (what.empty()) what = detail, detail.clear();
  if (!source.empty()) detail = source + (detail.empty() ? "" : ": " + detail);
  std::string msg = detail.empty() ? what : what + " (" + detail + ")";
  // 22.05 says only "Unspecified error" when slurmctld does not answer.
  if (msg.find("Unspecified error") != std::string::npos) msg += "; is slurmctld up? try `scontrol ping`";
  throw SlurmAnswerError(msg);
}

}  // namespace

int NodeInfo::total_gpus() const {
  int n = 0;
  for (const auto& [type, count] : gpus_by_type) n += count;
  return n;
}

std::map<std::string, int> parse_gres(const std::string& gres) {
  std::map<std::string, int> out;
  // Split on commas outside parentheses: "gpu:a100:4(S:0-1),gpu:v100:2".
  std::vector<std::string> items;
  std::string cur;
  int depth = 0;
  for (char c : gres) {
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c == ',' && depth == 0) {
      items.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  items.push_back(cur);
  for (std::string item : items) {
    if (auto paren = item.find('('); paren != std::string::npos) item.erase(paren);
    if (item.rfind("gres:", 0) == 0) item.erase(0, 5);
    auto parts = split(item, ':');
    if (parts.empty() || parts[0] != "gpu") continue;
    if (parts.size() == 1) {
      out[""] += 1;
    } else if (parts.size() == 2) {
      if (is_decimal_number(parts[1]))
        out[""] += to_int(parts[1]);
      else
        out[parts[1]] += 1;
    } else {
      out[parts[1]] += to_int(parts[2]);
    }
  }
  return out;
}

int gpus_in_tres(const std::string& tres) {
  int n = 0;
  for (const auto& item : split(tres, ',')) {
    auto eq = item.find('=');
    if (eq == std::string::npos) continue;
    std::string key = item.substr(0, eq);
    // "gres/gpu=4" counts; "gres/gpu:a100=4" repeats it by type.
    if (key == "gres/gpu") n = to_int(item.substr(eq + 1));
  }
  return n;
}

namespace {

struct StateName {
  JobState state;
  const char* name;
};
const StateName kStateNames[] = {
    {JobState::Unknown, "UNKNOWN"},          {JobState::Pending, "PENDING"},
    {JobState::Configuring, "CONFIGURING"},  {JobState::Running, "RUNNING"},
    {JobState::Completing, "COMPLETING"},    {JobState::Suspended, "SUSPENDED"},
    {JobState::Stopped, "STOPPED"},          {JobState::Signaling, "SIGNALING"},
    {JobState::StageOut, "STAGE_OUT"},       {JobState::Resizing, "RESIZING"},
    {JobState::Requeued, "REQUEUED"},        {JobState::RequeueHold, "REQUEUE_HOLD"},
    {JobState::RequeueFed, "REQUEUE_FED"},   {JobState::ResvDelHold, "RESV_DEL_HOLD"},
    {JobState::SpecialExit, "SPECIAL_EXIT"}, {JobState::Completed, "COMPLETED"},
    {JobState::Failed, "FAILED"},            {JobState::Cancelled, "CANCELLED"},
    {JobState::Timeout, "TIMEOUT"},          {JobState::NodeFail, "NODE_FAIL"},
    {JobState::Preempted, "PREEMPTED"},      {JobState::OutOfMemory, "OUT_OF_MEMORY"},
    {JobState::BootFail, "BOOT_FAIL"},       {JobState::Deadline, "DEADLINE"},
    {JobState::Revoked, "REVOKED"},
};

// A state as read: a name ddpctl does not know becomes Unknown, with the name
// kept in the reason so that nothing Slurm said is hidden.
void set_state(Job& job, const std::string& name) {
  if (auto s = parse_job_state(name)) {
    job.state = *s;
  } else {
    job.state = JobState::Unknown;
    if (!name.empty()) job.reason = "Slurm reports state " + name;
  }
}

}  // namespace

const char* state_name(JobState state) {
  for (const auto& s : kStateNames)
    if (s.state == state) return s.name;
  return "UNKNOWN";
}

std::optional<JobState> parse_job_state(const std::string& name) {
  std::string first = name.substr(0, name.find(' '));  // sacct: "CANCELLED by 0"
  for (const auto& s : kStateNames)
    if (first == s.name) return s.state;
  return std::nullopt;
}

bool is_terminal(JobState state) {
  switch (state) {
    case JobState::Completed:
    case JobState::Failed:
    case JobState::Cancelled:
    case JobState::Timeout:
    case JobState::NodeFail:
    case JobState::Preempted:
    case JobState::OutOfMemory:
    case JobState::BootFail:
    case JobState::Deadline:
    case JobState::Revoked:
      return true;
    default:
      return false;
  }
}

std::vector<Job> parse_squeue_json(const std::string& text) {
  // A busy cluster's queue is tens of MiB; keep only the fields read below
  // (a job has ~100), which cuts the parse's memory and time severalfold.
  static const std::set<std::string> kept = {
      "job_id", "name", "comment", "job_state", "state_reason", "partition", "account", "nodes",
      "current_working_directory", "submit_time", "start_time", "end_time", "time_limit", "node_count",
      "tres_alloc_str", "tres_req_str", "restart_cnt", "exit_code"};
  bool in_jobs = false;
  json::parser_callback_t keep = [&in_jobs](int depth, json::parse_event_t event, json& parsed) {
    if (event != json::parse_event_t::key) return true;
    if (depth == 1) {
      in_jobs = parsed == "jobs";
      return in_jobs || parsed == "errors" || parsed == "meta";
    }
    if (depth == 3 && in_jobs) return kept.count(parsed.get<std::string>()) > 0;
    return true;
  };
  json doc = json::parse(text, keep);
  throw_json_errors(doc);
  std::vector<Job> jobs;
  for (const json& j : doc.at("jobs")) {
    Job job;
    job.id = str_field(j, "job_id");
    job.name = str_field(j, "name");
    job.comment = str_field(j, "comment");
    job.reason = str_field(j, "state_reason");
    set_state(job, str_field(j, "job_state"));
    job.partition = str_field(j, "partition");
    job.account = str_field(j, "account");
    job.nodes = str_field(j, "nodes");
    job.cwd = str_field(j, "current_working_directory");
    job.submit_time = int_field(j, "submit_time");
    job.start_time = int_field(j, "start_time");
    job.end_time = int_field(j, "end_time");
    job.time_limit_s = int_field(j, "time_limit") * 60;
    job.node_count = static_cast<int>(int_field(j, "node_count"));
    std::string alloc = str_field(j, "tres_alloc_str");
    job.gpus = gpus_in_tres(alloc.empty() ? str_field(j, "tres_req_str") : alloc);
    job.restarts = static_cast<int>(int_field(j, "restart_cnt"));
    job.exit_code = str_field(j, "exit_code");
    job.source = "squeue";
    jobs.push_back(std::move(job));
  }
  return jobs;
}

// Fields of kSqueueFormat, separated by the ASCII unit separator.
std::vector<Job> parse_squeue_format(const std::string& text) {
  std::vector<Job> jobs;
  for (const auto& line : split(text, '\n')) {
    auto f = split(line, '\x1f');
    if (f.size() < 15) continue;
    Job job;
    job.id = f[0];
    job.name = f[1];
    job.comment = f[2] == "(null)" ? "" : f[2];
    job.reason = f[4];
    set_state(job, f[3]);
    job.submit_time = parse_slurm_date(f[5]);
    job.start_time = parse_slurm_date(f[6]);
    job.end_time = parse_slurm_date(f[7]);
    job.time_limit_s = parse_limit(f[8]);
    job.nodes = f[9];
    job.node_count = to_int(f[10]);
    int per_node = 0;
    for (const auto& [type, n] : parse_gres(f[11])) per_node += n;
    job.gpus = per_node * std::max(job.node_count, 1);
    job.partition = f[12];
    job.account = f[13];
    job.cwd = f[14];
    job.restarts = f.size() > 15 ? to_int(f[15]) : 0;
    job.source = "squeue";
    jobs.push_back(std::move(job));
  }
  return jobs;
}

// sacct -X -n -P -o with the fields of kSacctFormat.
std::vector<Job> parse_sacct(const std::string& text) {
  std::vector<Job> jobs;
  for (const auto& line : split(text, '\n')) {
    auto f = split(line, '|');
    if (f.size() < 16) continue;
    Job job;
    job.id = f[0];
    job.name = f[1];
    job.comment = f[2];
    job.reason = f[4];
    set_state(job, f[3]);
    job.partition = f[5];
    job.account = f[6];
    job.nodes = f[7] == "None assigned" ? "" : f[7];
    job.submit_time = parse_slurm_date(f[8]);
    job.start_time = parse_slurm_date(f[9]);
    job.end_time = parse_slurm_date(f[10]);
    job.time_limit_s = to_int(f[11]) * 60LL;
    job.node_count = to_int(f[12]);
    job.gpus = gpus_in_tres(f[13].empty() ? f[14] : f[13]);
    job.exit_code = f[15];
    job.cwd = f.size() > 16 ? f[16] : "";
    job.source = "sacct";
    jobs.push_back(std::move(job));
  }
  return jobs;
}

std::vector<NodeInfo> parse_sinfo_json(const std::string& text) {
  json doc = json::parse(text);
  throw_json_errors(doc);
  std::vector<NodeInfo> nodes;
  for (const json& n : doc.at("nodes")) {
    NodeInfo node;
    node.name = str_field(n, "name");
    if (n.contains("partitions") && n["partitions"].is_array())
      for (const auto& p : n["partitions"]) node.partitions.push_back(p.get<std::string>());
    for (const auto& f : split(str_field(n, "active_features").empty() ? str_field(n, "features")
                                                                        : str_field(n, "active_features"),
                               ','))
      if (!f.empty()) node.features.push_back(f);
    node.gpus_by_type = parse_gres(str_field(n, "gres"));
    node.cpus = static_cast<int>(int_field(n, "cpus"));
    node.memory_mib = int_field(n, "real_memory");
    node.state = str_field(n, "state");
    nodes.push_back(std::move(node));
  }
  return nodes;
}

}  // namespace ddpctl
