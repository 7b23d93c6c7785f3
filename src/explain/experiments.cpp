#include "explain/experiments.hpp"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/text.hpp"
#include "base/token.hpp"
#include "base/diagnostics.hpp"
#include "base/files.hpp"
#include "base/values.hpp"

namespace ddpctl {

namespace fs = std::filesystem;
using nlohmann::json;

std::string experiments_dir(const std::string& root) { return (fs::path(root) / "experiments").string(); }

Experiment create_experiment(const std::string& root, const std::string& name, const std::string& spec_file,
                             bool one_at_a_time, const std::string& kind) {
  Experiment e;
  e.kind = kind;
  e.name = name;
  e.spec_file = fs::absolute(spec_file).string();
  e.created_at = utc_now_iso();
  e.one_at_a_time = one_at_a_time;
  std::string stamp = e.created_at;
  stamp.erase(std::remove_if(stamp.begin(), stamp.end(), [](char c) { return c == '-' || c == ':'; }), stamp.end());
  e.id = fmt::format("{}-{}-{}", name, stamp, new_token().substr(0, 6));
  std::error_code ec;
  fs::create_directories(experiments_dir(root), ec);
  if (ec) throw UserError(Location{experiments_dir(root)}, "", "cannot create the experiments folder: " + ec.message());
  e.file = fs::absolute(fs::path(experiments_dir(root)) / (e.id + ".json")).string();
  save_experiment(e);
  return e;
}

void save_experiment(const Experiment& e) {
  json runs = json::array();
  for (const auto& [label, id] : e.runs) runs.push_back({{e.is_study() ? "trial" : "shape", label}, {"run", id}});
  json j = {{"format", 1},        {"name", e.name},       {"spec_file", e.spec_file},
            {"created_at", e.created_at}, {"one_at_a_time", e.one_at_a_time}, {"runs", runs}};
  if (!e.kind.empty()) j["kind"] = e.kind;
  write_file_atomic(e.file, j.dump(2) + "\n");
}

Experiment add_study_run(const std::string& root, const std::string& name, const std::string& spec_file,
                         const std::string& trial, const std::string& run_id) {
  std::optional<Experiment> study;
  for (auto& e : list_experiments(root))
    if (e.name == name) {
      if (!e.is_study())
        throw UserError(Location{"--study"}, "",
                        fmt::format("{} names a sweep's experiment ({}): name the study otherwise", printable(name),
                                    e.file));
      study = std::move(e);  // the latest of that name
    }
  if (!study) study = create_experiment(root, name, spec_file, false, "study");
  for (const auto& [label, id] : study->runs)
    if (id == run_id) return *study;
  study->runs.emplace_back(trial, run_id);
  save_experiment(*study);
  return *study;
}

std::vector<Experiment> list_experiments(const std::string& root) {
  std::vector<Experiment> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(experiments_dir(root), ec)) {
    if (entry.path().extension() != ".json") continue;
    try {
      json j = json::parse(read_file(entry.path().string()));
      Experiment e;
      e.id = entry.path().stem().string();
      e.file = fs::absolute(entry.path()).string();
      e.name = j.value("name", "");
      e.spec_file = j.value("spec_file", "");
      e.created_at = j.value("created_at", "");
      e.one_at_a_time = j.value("one_at_a_time", false);
      e.kind = j.value("kind", "");
      for (const auto& r : j.value("runs", json::array()))
        e.runs.emplace_back(r.value(e.is_study() ? "trial" : "shape", ""), r.value("run", ""));
      out.push_back(std::move(e));
    } catch (const std::exception&) {
      continue;
    }
  }
  std::sort(out.begin(), out.end(), [](const Experiment& a, const Experiment& b) {
    return a.created_at != b.created_at ? a.created_at < b.created_at : a.id < b.id;
  });
  return out;
}

std::optional<Experiment> find_experiment(const std::string& root, const std::string& query) {
  std::vector<Experiment> all = list_experiments(root);
  for (const auto& e : all)
    if (e.id == query) return e;
  for (auto it = all.rbegin(); it != all.rend(); ++it)
    if (it->name == query) return *it;
  std::optional<Experiment> found;
  for (const auto& e : all)
    if (e.id.rfind(query, 0) == 0) {
      if (found) return std::nullopt;  // ambiguous: let find_run say so for runs
      found = e;
    }
  return found;
}

std::vector<Run> find_runs(const std::string& root, const std::string& query) {
  if (auto e = find_experiment(root, query)) {
    std::vector<Run> runs;
    for (const auto& [label, id] : e->runs) runs.push_back(load_run((fs::path(root) / id).string()));
    if (runs.empty())
      throw UserError(Location{e->file}, "", fmt::format("experiment {} has no run recorded", e->id));
    return runs;
  }
  return {find_run(root, query)};
}

std::vector<JobRef> resolve_targets(const std::vector<std::string>& args, const std::string& root,
                                    std::vector<Run>& runs) {
  std::vector<std::string> bare;
  std::vector<std::string> only_job;  // per run: "" = all its jobs, else the one job asked for
  for (const auto& arg : args) {
    if (is_decimal_number(arg) && arg.size() < 19) {
      bare.push_back(arg);
    } else {
      for (Run& run : find_runs(root, arg)) {  // an experiment names several
        runs.push_back(std::move(run));
        only_job.emplace_back();
      }
    }
  }
  std::vector<std::string> orphans;
  std::vector<Run> all = bare.empty() ? std::vector<Run>{} : list_runs(root);
  for (const auto& id : bare) {
    bool found = false;
    for (const auto& run : all)
      for (const auto& a : run.attempts)
        if (!found && a.job_id == id) {
          runs.push_back(run);
          only_job.push_back(id);
          found = true;
        }
    if (!found) orphans.push_back(id);
  }
  // Every run is in place now, so pointers into `runs` stay valid.
  std::vector<JobRef> refs;
  for (size_t i = 0; i < runs.size(); ++i)
    for (const auto& a : runs[i].attempts)
      if (!a.job_id.empty() && (only_job[i].empty() || only_job[i] == a.job_id))
        refs.push_back({a.job_id, &runs[i], &a});
  for (const auto& id : orphans) refs.push_back({id});
  return refs;
}

}  // namespace ddpctl
