// A run's record (run_record.hpp): outcome words and lookups.
#include "runs/run_record.hpp"

#include "slurm/job_array.hpp"

namespace ddpctl {

const char* outcome_name(Outcome outcome) {
  switch (outcome) {
    case Outcome::Intent:
      return "intent";
    case Outcome::Submitted:
      return "submitted";
    case Outcome::Rejected:
      return "rejected";
    case Outcome::Unconfirmed:
      return "unconfirmed";
    case Outcome::Absent:
      return "absent";
  }
  return "intent";
}

std::optional<Outcome> parse_outcome(const std::string& name) {
  for (Outcome o : {Outcome::Intent, Outcome::Submitted, Outcome::Rejected, Outcome::Unconfirmed, Outcome::Absent})
    if (name == outcome_name(o)) return o;
  return std::nullopt;
}

const RunShape* Run::shape(const std::string& label) const {
  for (const auto& s : shapes)
    if (s.label == label) return &s;
  return nullptr;
}

const Attempt* Run::latest_job() const {
  for (auto it = attempts.rbegin(); it != attempts.rend(); ++it)
    if (!it->job_id.empty()) return &*it;
  return nullptr;
}

const Attempt* job_attempt(const Run& run, const std::string& job_id) {
  for (const auto& a : run.attempts)
    if (!job_id.empty() && a.job_id == job_id) return &a;
  return nullptr;
}

const JobEnd* Attempt::task_end(int cell) const {
  for (const auto& e : task_ends)
    if (e.job.array_task_id && *e.job.array_task_id + array_offset == cell) return &e;
  return nullptr;
}

std::vector<int> Attempt::array_cells() const {
  std::vector<int> cells;
  if (auto tasks = parse_array_tasks(array))
    for (int i : tasks->indices) cells.push_back(i + array_offset);
  return cells;
}

}  // namespace ddpctl
