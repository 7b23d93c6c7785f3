#include "runs/run_json.hpp"

namespace ddpctl {

nlohmann::json attempt_json(const Attempt& a) {
  nlohmann::json j = {{"job", a.job_id.empty() ? nlohmann::json() : nlohmann::json(a.job_id)},
                      {"shape", a.shape},
                      {"outcome", outcome_name(a.outcome)}};
  if (!a.array.empty()) j["array"] = a.array;
  if (!a.cluster.empty()) j["cluster"] = a.cluster;
  if (!a.reason.empty()) j["reason"] = a.reason;
  if (a.race) j["race"] = true;
  return j;
}

nlohmann::json run_json(const Run& run) {
  nlohmann::json jobs = nlohmann::json::array();
  for (const auto& a : run.attempts) jobs.push_back(attempt_json(a));
  nlohmann::json j = {{"run", run.id}, {"name", run.name}, {"dir", run.dir}, {"jobs", jobs}};
  if (!run.cluster.empty()) j["cluster"] = run.cluster;
  return j;
}

void state_run(Output& out, const Run& run) {
  const nlohmann::json j = run_json(run);
  for (auto it = j.begin(); it != j.end(); ++it) out.fact(it.key(), it.value());
}

nlohmann::json answer_event_fields(const Attempt& a) {
  nlohmann::json j = attempt_json(a);
  j["token"] = a.token;
  return j;
}

}  // namespace ddpctl
