#pragma once
// Experiments: the runs one `ddpctl sweep` made, kept as
// <runs>/experiments/<name>-<utc>-<6 hex>.json and written before the first
// sbatch and after each run is recorded, so a sweep cut short still lists
// what it made. `status`, `cancel` and `report` accept an experiment's name
// (its latest) or id wherever they accept a run. A study (`ddpctl tune`,
// `submit --study NAME --trial N`) is one of kind "study": its runs are its
// trials, each added as it is submitted; `report STUDY` lists them by
// parameter (report/report_study.hpp).
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runs/run_store.hpp"

namespace ddpctl {

struct Experiment {
  std::string id, name, file;  // file: absolute path of the record
  std::string spec_file, created_at;
  bool one_at_a_time = false;
  std::string kind;  // "" a sweep's, "study" a study's
  std::vector<std::pair<std::string, std::string>> runs;  // shape label (a study: the trial's number), run id
  bool is_study() const { return kind == "study"; }
};

std::string experiments_dir(const std::string& root);
Experiment create_experiment(const std::string& root, const std::string& name, const std::string& spec_file,
                             bool one_at_a_time, const std::string& kind = "");
void save_experiment(const Experiment& e);
// Adds run `run_id` as trial `trial` of the study `name` (the latest
// record of that name and kind, else a new one for `spec_file`); once: a
// run already in it is left. A name a sweep's experiment has is refused.
Experiment add_study_run(const std::string& root, const std::string& name, const std::string& spec_file,
                         const std::string& trial, const std::string& run_id);
// Every experiment under root, oldest first; unreadable records are skipped.
std::vector<Experiment> list_experiments(const std::string& root);
// By id, unique id prefix, or name (the latest of that name); nullopt if none.
std::optional<Experiment> find_experiment(const std::string& root, const std::string& query);

// The runs an argument names: an experiment's runs (in sweep order), else the
// one run find_run() finds.
std::vector<Run> find_runs(const std::string& root, const std::string& query);

// One job a command acts on: from a run's ledger, or a bare job id.
struct JobRef {
  std::string job_id;
  const Run* run = nullptr;  // null for a bare job id
  const Attempt* attempt = nullptr;
};

// RUN (name, id, prefix or path), EXPERIMENT or JOBID arguments -> the runs
// and their jobs. A job id that belongs to a run is shown with its run.
// `runs` receives the runs named and must outlive the refs (they point into it).
std::vector<JobRef> resolve_targets(const std::vector<std::string>& args, const std::string& root,
                                    std::vector<Run>& runs);

}  // namespace ddpctl
