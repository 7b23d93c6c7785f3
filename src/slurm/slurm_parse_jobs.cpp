#include "slurm/slurm_parse_jobs.hpp"

#include <algorithm>
#include <cstdlib>
#include <fmt/format.h>
#include <set>

#include "slurm/job_array.hpp"
#include "slurm/slurm_json.hpp"
#include "slurm/slurm_parse_nodes.hpp"
#include "base/text.hpp"
#include "base/values.hpp"

namespace ddpctl {

using namespace slurm_json;

namespace {

// Slurm's own order (job_state_string): a flag names the state over the base.
const char* const kStateFlagsFirst[] = {"COMPLETING", "STAGE_OUT",    "CONFIGURING",  "RESIZING",
                                        "REQUEUED",   "REQUEUE_FED",  "REQUEUE_HOLD", "SPECIAL_EXIT",
                                        "STOPPED",    "REVOKED",      "RESV_DEL_HOLD", "SIGNALING"};

bool is_state_flag(const std::string& name) {
  for (const char* f : kStateFlagsFirst)
    if (name == f) return true;
  return false;
}

// A state as read: a name ddpctl does not know becomes Unknown, with the name
// kept in the reason so that nothing Slurm said is hidden.
void set_state(Job& job, const std::string& name) {
  if (auto s = parse_job_state(name)) {
    job.state = *s;
    if (is_state_flag(name)) job.flags.push_back(name);
    // sacct: "CANCELLED by 1234".
    if (auto by = name.find(" by "); by != std::string::npos) job.cancelled_by = name.substr(by + 4);
  } else {
    job.state = JobState::Unknown;
    if (!name.empty()) job.reason = "Slurm reports state " + name;
  }
}

// 23.11 and later: ["PENDING", "REQUEUED"], the base state first, then flags.
void set_state(Job& job, const std::vector<std::string>& names) {
  if (names.empty()) return set_state(job, std::string());
  std::string effective = names.front();
  for (size_t i = 1; i < names.size(); ++i) job.flags.push_back(names[i]);
  for (const char* f : kStateFlagsFirst)
    if (std::find(job.flags.begin(), job.flags.end(), f) != job.flags.end()) {
      effective = f;
      break;
    }
  std::vector<std::string> flags = job.flags;
  set_state(job, effective);
  job.flags = flags;
}

// The %K at the end of a task list ("2-5%2"), even of one Slurm cut short.
std::optional<int> throttle_of(const std::string& tasks) {
  auto pct = tasks.rfind('%');
  if (pct == std::string::npos) return std::nullopt;
  if (auto t = parse_array_tasks("0" + tasks.substr(pct))) return t->max_parallel;
  return std::nullopt;
}

// A record of an array, from the id as squeue's %i and sacct's JobID print
// it: "123_[4-19%4]" (pending tasks, collapsed), "123_4" (one task); "123"
// (no array) and "123+1" (a heterogeneous job's part) leave it alone.
void set_array_from_printed_id(Job& job, const std::string& printed) {
  auto under = printed.find('_');
  if (under == std::string::npos || under == 0) return;
  std::string rest = printed.substr(under + 1);
  if (rest.size() >= 2 && rest.front() == '[' && rest.back() == ']') {
    job.array_job_id = printed.substr(0, under);
    job.array_tasks = rest.substr(1, rest.size() - 2);
    job.array_max_tasks = throttle_of(job.array_tasks);
  } else if (auto task = parse_array_tasks(rest); task && task->indices.size() == 1 && !task->max_parallel &&
             rest.find_first_not_of("0123456789") == std::string::npos) {  // "4", not "4-4" or "4%2"
    job.array_job_id = printed.substr(0, under);
    job.array_task_id = task->indices.front();
  }
}

// squeue --json's document with only the fields read_squeue_job reads: a
// busy cluster's queue is tens of MiB, and keeping only those (a job has
// ~100) cuts the parse's memory and time severalfold.
json parse_squeue_document(const std::string& text) {
  static const std::set<std::string> kept = {
      "job_id", "name", "comment", "job_state", "state_reason", "state_description", "partition", "account", "nodes",
      "current_working_directory", "submit_time", "start_time", "end_time", "time_limit", "node_count",
      "tres_alloc_str", "tres_req_str", "restart_cnt", "exit_code", "array_job_id", "array_task_id",
      "array_max_tasks", "array_task_string"};
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
  json doc;
  try {
    doc = json::parse(text, keep);
  } catch (const json::exception& e) {
    throw SlurmFormatError(std::string("cannot read squeue --json: not JSON (") + e.what() + ")");
  }
  return doc;
}

// 23.11 and later: exit_code as {"status": ["SIGNALED"], "return_code": {...},
// "signal": {"id": {...}, "name": "KILL"}}.
void read_exit_code(const Reader& r, const json& j, const std::string& at, Job& job) {
  auto it = j.find("exit_code");
  if (it != j.end() && !it->is_null()) {
    if (!it->is_object()) r.bad(at, "exit_code", "a {status, return_code, signal} object", *it);
    if (auto code = r.wrapped(*it, "return_code", at + ".exit_code")) job.exit.code = static_cast<int>(*code);
    if (auto sig = it->find("signal"); sig != it->end() && sig->is_object())
      if (auto id = r.wrapped(*sig, "id", at + ".exit_code.signal")) job.exit.signal = static_cast<int>(*id);
    if (job.exit.signal) job.exit.code.reset();
  }
}

// An array's records. 22.05 (v0.0.38) writes plain numbers, an unset task
// id as null and "no array" as array_job_id 0; from v0.0.39 each is
// {set, infinite, number}, the task id unset on a collapsed record.
void read_array_fields(const Reader& r, const json& j, const std::string& at, Job& job) {
  auto array_number = [&](const char* key) -> std::optional<long long> {
    if (r.source().parser > 38) return r.wrapped(j, key, at);
    if (auto it = j.find(key); it == j.end() || it->is_null()) return std::nullopt;
    return r.integer(j, key, at);
  };
  if (auto array_id = array_number("array_job_id"); array_id && *array_id > 0) {
    job.array_job_id = std::to_string(*array_id);
    job.array_tasks = r.str(j, "array_task_string", at);
    if (job.array_tasks.empty())
      if (auto task = array_number("array_task_id")) job.array_task_id = static_cast<int>(*task);
    if (auto max = array_number("array_max_tasks"); max && *max > 0) job.array_max_tasks = static_cast<int>(*max);
    else job.array_max_tasks = throttle_of(job.array_tasks);
  }
}

Job read_squeue_job(const Reader& r, const json& j, const std::string& at) {
  Job job;
  job.id = std::to_string(r.integer(j, "job_id", at));
  job.name = r.str(j, "name", at);
  job.comment = r.str(j, "comment", at);
  job.reason = r.str(j, "state_reason", at);
  if (r.flag_arrays())
    set_state(job, r.strings(j, "job_state", at));
  else
    set_state(job, r.str(j, "job_state", at));
  // As squeue's %r: the description when Slurm set one, which says more
  // ("ReqNodeNotAvail, Reserved for maintenance", where state_reason may
  // still say "Reservation"); reasons.hpp reads the detail.
  if (job.state == JobState::Pending && j.contains("state_description") && j["state_description"].is_string() &&
      !j["state_description"].get<std::string>().empty())
    job.reason = j["state_description"].get<std::string>();
  job.partition = r.str(j, "partition", at);
  job.account = r.str(j, "account", at);
  job.nodes = r.str(j, "nodes", at);
  job.cwd = r.str(j, "current_working_directory", at);
  job.submit_time = r.time(j, "submit_time", at);
  job.start_time = r.time(j, "start_time", at);
  job.end_time = r.time(j, "end_time", at);
  if (auto limit = r.number(j, "time_limit", at, 38)) job.time_limit_s = *limit * 60;
  job.node_count = static_cast<int>(r.number(j, "node_count", at, 38).value_or(0));
  std::string alloc = r.str(j, "tres_alloc_str", at), req = r.str(j, "tres_req_str", at);
  job.gpus = gpus_in_tres(alloc.empty() ? req : alloc);
  // As sacct's (usage_account.hpp): the allocation's CPUs, the memory asked.
  job.cpus = to_int(tres_value(alloc.empty() ? req : alloc, "cpu"));
  std::string why;
  if (auto mem = parse_memory_mib(tres_value(req, "mem"), &why)) job.mem_mib = *mem;
  job.requeues = static_cast<int>(r.integer(j, "restart_cnt", at));
  if (r.flag_arrays())
    read_exit_code(r, j, at, job);
  else
    job.exit = exit_from_wait_status(r.integer(j, "exit_code", at));
  read_array_fields(r, j, at, job);
  job.source = "squeue";
  return job;
}

}  // namespace

std::vector<Job> parse_squeue_json(const std::string& text) {
  json doc = parse_squeue_document(text);
  throw_json_errors(doc);
  Reader r(doc, "squeue --json");
  std::vector<Job> jobs;
  const json& list = r.list(doc, "jobs");
  for (size_t i = 0; i < list.size(); ++i) jobs.push_back(read_squeue_job(r, list[i], fmt::format("jobs[{}]", i)));
  return jobs;
}

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
    // %A %F %K: an array task's own id, the array's, the task (or, on a
    // collapsed record, whose %i is "123_[...]", the pending tasks' list);
    // %K is N/A for a job that is no array's.
    if (f.size() >= 18 && f[17] != "N/A" && !f[17].empty()) {
      job.id = f[15];
      job.array_job_id = f[16];
      if (f[0].find("_[") != std::string::npos) {
        job.array_tasks = f[17];
        job.array_max_tasks = throttle_of(f[17]);
      } else if (auto task = parse_array_tasks(f[17]); task && task->indices.size() == 1) {
        job.array_task_id = task->indices.front();
      }
    }
    job.source = "squeue";
    jobs.push_back(std::move(job));
  }
  return jobs;
}

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
    if (int minutes = to_int(f[11]); minutes > 0) job.time_limit_s = minutes * 60LL;
    job.node_count = to_int(f[12]);
    job.gpus = gpus_in_tres(f[13].empty() ? f[14] : f[13]);
    job.exit = exit_from_sacct(f[15]);
    job.cwd = f.size() > 16 ? f[16] : "";
    // JobID prints an array's records as "123_4" and "123_[4-19%4]";
    // JobIDRaw is a task's own id (the array's for the collapsed record).
    set_array_from_printed_id(job, f[0]);
    if (f.size() > 17 && !f[17].empty()) job.id = f[17];
    job.cpus = to_int(tres_value(f[13], "cpu"));
    std::string why;
    if (auto mem = parse_memory_mib(tres_value(f[14], "mem"), &why)) job.mem_mib = *mem;
    if (f.size() > 18)
      if (double j = std::atof(f[18].c_str()); j > 0) job.energy_j = j;
    job.source = "sacct";
    jobs.push_back(std::move(job));
  }
  return jobs;
}

}  // namespace ddpctl
