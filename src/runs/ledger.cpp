// The ledger's read-modify-write under its lock, and the submission tokens
// that tie an attempt to its job (ledger.hpp).
#include "runs/ledger.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <stdexcept>
#include <sys/file.h>
#include <unistd.h>

#include "base/diagnostics.hpp"
#include "base/files.hpp"

namespace ddpctl {

using nlohmann::json;

namespace {

// A job as a ledger keeps its end: every field, the state by its name.
json job_json(const Job& j) {
  auto opt = [](const std::optional<long long>& v) { return v ? json(*v) : json(); };
  auto opt_int = [](const std::optional<int>& v) { return v ? json(*v) : json(); };
  json out{{"id", j.id},
              {"name", j.name},
              {"comment", j.comment},
              {"state", state_name(j.state)},
              {"flags", j.flags},
              {"reason", j.reason},
              {"partition", j.partition},
              {"account", j.account},
              {"nodes", j.nodes},
              {"cwd", j.cwd},
              {"submit_time", opt(j.submit_time)},
              {"start_time", opt(j.start_time)},
              {"end_time", opt(j.end_time)},
              {"time_limit_s", opt(j.time_limit_s)},
              {"node_count", j.node_count},
              {"gpus", j.gpus},
              {"restarts", j.requeues},  // its key from before "requeues": earlier ledgers read
              {"exit", {{"code", opt_int(j.exit.code)}, {"signal", opt_int(j.exit.signal)}}},
              {"cancelled_by", j.cancelled_by},
              {"source", j.source}};
  // sacct's allocation and energy, where it said them (usage_account.hpp).
  if (j.cpus > 0) out["cpus"] = j.cpus;
  if (j.mem_mib > 0) out["mem_mib"] = j.mem_mib;
  if (j.energy_j) out["energy_j"] = *j.energy_j;
  // Only an array's records carry these: a plain job's record is as before.
  if (!j.array_job_id.empty()) {
    out["array_job_id"] = j.array_job_id;
    out["array_task_id"] = opt_int(j.array_task_id);
    out["array_tasks"] = j.array_tasks;
    out["array_max_tasks"] = opt_int(j.array_max_tasks);
  }
  return out;
}

Job job_from_json(const json& j) {
  auto opt = [&](const char* key) -> std::optional<long long> {
    auto it = j.find(key);
    return it != j.end() && it->is_number_integer() ? std::optional<long long>(it->get<long long>()) : std::nullopt;
  };
  Job job;
  job.id = j.value("id", "");
  job.name = j.value("name", "");
  job.comment = j.value("comment", "");
  job.state = parse_job_state(j.value("state", "")).value_or(JobState::Unknown);
  job.flags = j.value("flags", std::vector<std::string>{});
  job.reason = j.value("reason", "");
  job.partition = j.value("partition", "");
  job.account = j.value("account", "");
  job.nodes = j.value("nodes", "");
  job.cwd = j.value("cwd", "");
  job.submit_time = opt("submit_time");
  job.start_time = opt("start_time");
  job.end_time = opt("end_time");
  job.time_limit_s = opt("time_limit_s");
  job.node_count = j.value("node_count", 0);
  job.gpus = j.value("gpus", 0);
  job.cpus = j.value("cpus", 0);
  job.mem_mib = j.value("mem_mib", 0LL);
  if (auto e = j.find("energy_j"); e != j.end() && e->is_number()) job.energy_j = e->get<double>();
  job.requeues = j.value("restarts", 0);
  if (auto e = j.find("exit"); e != j.end() && e->is_object()) {
    if (auto c = e->find("code"); c != e->end() && c->is_number_integer()) job.exit.code = c->get<int>();
    if (auto g = e->find("signal"); g != e->end() && g->is_number_integer()) job.exit.signal = g->get<int>();
  }
  job.cancelled_by = j.value("cancelled_by", "");
  job.source = j.value("source", "");
  job.array_job_id = j.value("array_job_id", "");
  if (auto t = opt("array_task_id")) job.array_task_id = static_cast<int>(*t);
  job.array_tasks = j.value("array_tasks", "");
  if (auto m = opt("array_max_tasks")) job.array_max_tasks = static_cast<int>(*m);
  return job;
}

json end_json(const JobEnd& e) {
  json earlier = json::array(), nodes = json::array();
  for (const auto& j : e.earlier) earlier.push_back(job_json(j));
  for (const auto& n : e.nodes) nodes.push_back({{"name", n.name}, {"state", n.state}});
  return json{{"job", job_json(e.job)}, {"earlier", earlier}, {"nodes", nodes}, {"recorded_at", e.recorded_at}};
}

// An end this version cannot read (damaged, or a state it does not know) is
// no end: Slurm is asked again, as before it was recorded.
std::optional<JobEnd> end_from_json(const json& j) {
  if (!j.is_object() || !j.contains("job") || !j["job"].is_object()) return std::nullopt;
  JobEnd e;
  e.job = job_from_json(j["job"]);
  if (!is_terminal(e.job.state) || e.job.id.empty()) return std::nullopt;
  for (const auto& a : j.value("earlier", json::array())) e.earlier.push_back(job_from_json(a));
  for (const auto& n : j.value("nodes", json::array())) {
    NodeInfo node;
    node.name = n.value("name", "");
    node.state = n.value("state", "");
    e.nodes.push_back(node);
  }
  e.recorded_at = j.value("recorded_at", 0LL);
  return e;
}

json to_json(const Attempt& a) {
  json j{{"token", a.token},
         {"shape", a.shape},
         {"script", a.script},
         {"argv", a.argv},
         {"intent_at", a.intent_at},
         {"outcome", outcome_name(a.outcome)},
         {"job_id", a.job_id},
         {"cluster", a.cluster},
         {"reason", a.reason},
         {"decided_at", a.decided_at},
         {"cancel_requested_at", a.cancel_requested_at},
         {"pid", a.pid},
         {"host", a.host}};
  if (a.end) j["end"] = end_json(*a.end);
  if (!a.array.empty()) j["array"] = a.array;
  if (a.array_offset) j["array_offset"] = a.array_offset;
  if (a.race) j["race"] = true;
  if (!a.task_ends.empty()) {
    json ends = json::array();
    for (const auto& e : a.task_ends) ends.push_back(end_json(e));
    j["task_ends"] = ends;
  }
  return j;
}

Attempt attempt_from_json(const json& j) {
  Attempt a;
  a.token = j.value("token", "");
  a.shape = j.value("shape", "");
  a.script = j.value("script", "");
  a.argv = j.value("argv", std::vector<std::string>{});
  a.intent_at = j.value("intent_at", "");
  // A word this version never wrote is kept unsettled rather than guessed.
  a.outcome = parse_outcome(j.value("outcome", "intent")).value_or(Outcome::Intent);
  a.job_id = j.value("job_id", "");
  a.cluster = j.value("cluster", "");
  a.reason = j.value("reason", "");
  a.decided_at = j.value("decided_at", "");
  a.cancel_requested_at = j.value("cancel_requested_at", "");
  a.pid = j.value("pid", 0);
  a.host = j.value("host", "");
  a.array = j.value("array", "");
  a.array_offset = j.value("array_offset", 0);
  a.race = j.value("race", false);
  // Only the job's own end: a record of another id is not this job's.
  try {
    if (auto e = j.find("end"); e != j.end() && !a.job_id.empty())
      if (auto end = end_from_json(*e); end && end->job.id == a.job_id) a.end = std::move(end);
    // An array's cells: only its own tasks' records.
    for (const auto& e : j.value("task_ends", json::array()))
      if (auto end = end_from_json(e); end && end->job.array_job_id == a.job_id && end->job.array_task_id)
        a.task_ends.push_back(std::move(*end));
  } catch (const json::exception&) {
  }
  return a;
}

}  // namespace

std::string job_comment(const std::string& token, const std::string& user_comment) {
  return user_comment.empty() ? "ddpctl:" + token : "ddpctl:" + token + " " + user_comment;
}

bool comment_has_token(const std::string& comment, const std::string& token) {
  const std::string mine = job_comment(token);
  return comment.compare(0, mine.size(), mine) == 0 && (comment.size() == mine.size() || comment[mine.size()] == ' ');
}

namespace {

void write_ledger(const std::string& dir, const std::string& id, const std::vector<Attempt>& list) {
  json attempts = json::array();
  for (const auto& a : list) attempts.push_back(to_json(a));
  json ledger = {{"format", 1}, {"run", id}, {"attempts", attempts}};
  write_file_atomic(dir + "/ledger.json", ledger.dump(2) + "\n");
}

std::vector<Attempt> read_ledger(const std::string& dir) {
  json ledger;
  try {
    ledger = json::parse(read_file(dir + "/ledger.json"));
  } catch (const json::exception& e) {
    throw UserError(Location{dir + "/ledger.json"}, "", std::string("damaged ledger: ") + e.what());
  }
  return ledger_attempts(ledger);
}

// flock on <run dir>/ledger.lock for one read-modify-write (held briefly).
class LedgerLock {
 public:
  explicit LedgerLock(const std::string& dir) {
    fd_ = ::open((dir + "/ledger.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw UserError(Location{dir + "/ledger.lock"}, "", std::string("cannot open: ") + std::strerror(errno));
    while (::flock(fd_, LOCK_EX) != 0)
      if (errno != EINTR) {
        int e = errno;
        ::close(fd_);
        throw UserError(Location{dir + "/ledger.lock"}, "", std::string("cannot lock: ") + std::strerror(e));
      }
  }
  ~LedgerLock() { ::close(fd_); }
  LedgerLock(const LedgerLock&) = delete;
  LedgerLock& operator=(const LedgerLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace

void save_ledger(const Run& run) {
  LedgerLock lock(run.dir);
  write_ledger(run.dir, run.id, run.attempts);
}

void update_ledger(Run& run, const std::function<void(std::vector<Attempt>&)>& change) {
  LedgerLock lock(run.dir);
  std::vector<Attempt> attempts = read_ledger(run.dir);
  change(attempts);
  write_ledger(run.dir, run.id, attempts);
  run.attempts = attempts;
}

int record_job_ends(Run& run, const std::map<std::string, JobEnd>& ends) {
  bool news = std::any_of(run.attempts.begin(), run.attempts.end(), [&](const Attempt& a) {
    return !a.end && ends.count(a.job_id);
  });
  if (!news) return 0;
  int recorded = 0;
  update_ledger(run, [&](std::vector<Attempt>& attempts) {
    for (auto& a : attempts)
      if (auto it = ends.find(a.job_id); !a.end && !a.job_id.empty() && it != ends.end()) {
        a.end = it->second;
        ++recorded;
      }
  });
  return recorded;
}

Attempt& attempt_by_token(std::vector<Attempt>& attempts, const std::string& token) {
  for (auto& a : attempts)
    if (a.token == token) return a;
  attempts.emplace_back();
  attempts.back().token = token;
  return attempts.back();
}

std::vector<Attempt> ledger_attempts(const json& ledger) {
  std::vector<Attempt> out;
  for (const auto& a : ledger.value("attempts", json::array())) out.push_back(attempt_from_json(a));
  return out;
}

}  // namespace ddpctl
