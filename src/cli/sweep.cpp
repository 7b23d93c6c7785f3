// ddpctl sweep SPEC: one run per entry of the spec's `sweep:` list, recorded
// as one experiment; `report EXPERIMENT` turns it into a scaling table.
#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <iostream>
#include <memory>

#include "app.hpp"
#include "common.hpp"
#include "experiments.hpp"
#include "files.hpp"
#include "render.hpp"
#include "submit.hpp"
#include "submitting.hpp"
#include "text.hpp"
#include "values.hpp"

namespace ddpctl::cli {

namespace {

struct SweepOptions {
  std::string spec, name, runs, templates;
  std::vector<std::string> sets, only;
  bool one_at_a_time = false, dry_run = false, no_preflight = false, again = false;
};

void run_sweep(const SweepOptions& o) {
  if (auto problem = script_value_problem(o.spec))
    throw UserError(Location{printable(o.spec)}, "", "the spec's path " + *problem);
  ResolvedRun resolved = load_and_resolve(o.spec, o.sets);
  if (!resolved.spec.has_sweep)
    throw UserError(Location{o.spec}, "sweep",
                    "this spec has no `sweep:` list of shapes (e.g. `sweep: [{nodes: 1, gpus_per_node: 1}, {nodes: 2, "
                    "gpus_per_node: 1}]`); `ddpctl submit` runs a single shape");
  std::vector<size_t> chosen;
  std::vector<std::string> labels;
  for (const auto& s : resolved.shapes) labels.push_back(s.label);
  for (size_t i = 0; i < resolved.shapes.size(); ++i)
    if (o.only.empty() || std::find(o.only.begin(), o.only.end(), resolved.shapes[i].label) != o.only.end())
      chosen.push_back(i);
  for (const auto& l : o.only)
    if (std::find(labels.begin(), labels.end(), l) == labels.end())
      throw UserError(Location{"--only"}, "", fmt::format("no sweep shape labelled {}{}; shapes: {}", printable(l),
                                                         did_you_mean(l, labels), join(labels, ", ")));
  std::string spec_text = read_file(o.spec);
  std::string root = runs_root(o.runs);
  std::string experiment_name = o.name.empty() ? resolved.spec.name : o.name;
  if (!is_run_name(experiment_name))
    throw UserError(Location{"--name"}, "", "an experiment name is letters, digits, '.', '_' or '-' (at most 64)");
  SystemCommandRunner runner;
  SlurmClient slurm(runner);
  if (!o.no_preflight) {
    Diagnostics all;
    for (size_t i : chosen) {
      Diagnostics shape = preflight(resolved, i, slurm);
      for (const auto& d : shape.items()) all.add(d);
    }
    all.throw_if_any();
  }
  if (o.dry_run) {
    std::vector<std::string> picked;
    for (size_t i : chosen) picked.push_back(resolved.shapes[i].label);
    std::cout << fmt::format("dry run: {} passed validation{}; nothing was submitted\n", o.spec,
                             o.no_preflight ? "" : " and the cluster preflight");
    std::cout << fmt::format("would submit one run per shape: {}{}\n", join(picked, ", "),
                             o.one_at_a_time ? ", one at a time (each after the previous ends)" : "");
    return;
  }
  create_output_dir(resolved);
  std::vector<RenderedScript> scripts = render_scripts(resolved, templates_dir(o.templates));
  Experiment experiment = create_experiment(root, experiment_name, o.spec, o.one_at_a_time);
  std::string previous_job;
  int submitted = 0, failed = 0;
  for (size_t i : chosen) {
    const ResolvedShape& shape = resolved.shapes[i];
    // The same identity as `submit --shape LABEL`: re-running a sweep does not
    // duplicate a run whose job is still queued or running.
    std::vector<std::string> identity = o.sets;
    identity.push_back("--shape=" + shape.label);
    std::string hash = spec_hash(o.spec, spec_text, identity);
    EarlierRuns earlier = earlier_runs(root, hash, slurm);
    if (earlier.active && !o.again) {
      std::cout << fmt::format("shape {}: already submitted, job {} of run {} is still queued or running\n",
                               shape.label, earlier.active->second, earlier.active->first);
      experiment.runs.emplace_back(shape.label, earlier.active->first);
      save_experiment(experiment);
      previous_job = earlier.active->second;
      continue;
    }
    ResolvedRun one = resolved;
    one.shapes = {shape};
    std::vector<std::pair<std::string, std::string>> files;
    for (const auto& s : scripts)
      if (s.label == shape.label) files.emplace_back(s.file_name, s.text);
    Run run = create_run(root, one, spec_text, o.sets, hash, files);
    experiment.runs.emplace_back(shape.label, run.id);
    save_experiment(experiment);
    std::vector<std::string> extra;
    std::string after = o.one_at_a_time ? previous_job : "";
    if (!after.empty()) extra.push_back("--dependency=afterany:" + after);
    Attempt a = submit_attempt(run, run.shapes.front(), slurm, extra);
    if (a.outcome == "submitted") {
      ++submitted;
      previous_job = a.job_id;
      std::cout << fmt::format("shape {}: submitted job {}{} as run {}\n", shape.label, a.job_id,
                               after.empty() ? "" : " (starts after job " + after + " ends)", run.id);
    } else {
      ++failed;
      std::cerr << fmt::format("ddpctl: error: shape {}: {}: {} (recorded in {}/ledger.json)\n", shape.label,
                               a.outcome == "rejected" ? "sbatch rejected the job" : "sbatch's answer was unclear",
                               a.reason, run.dir);
    }
  }
  std::cout << fmt::format("experiment {}: {} run(s){}\n  status: ddpctl status {}\n  report: ddpctl report {}\n",
                           experiment.id, experiment.runs.size(),
                           failed ? fmt::format(", {} not submitted", failed) : "", experiment.name,
                           experiment.name);
  if (failed)
    throw UserError(Location{experiment.file}, "",
                    fmt::format("{} of the sweep's shapes were not submitted; re-run `ddpctl sweep` to retry them "
                                "(runs already queued are not submitted again)",
                                failed));
}

}  // namespace

void setup_sweep(CLI::App& app) {
  auto opts = std::make_shared<SweepOptions>();
  CLI::App* cmd = app.add_subcommand("sweep", "Submit one run per shape of a spec's `sweep:` list, as an experiment");
  cmd->add_option("spec", opts->spec, "Run spec (YAML) with a `sweep:` list")->required();
  cmd->add_option("--set", opts->sets, "Override a spec field: KEY=VALUE with a dotted KEY");
  cmd->add_option("--name", opts->name, "Experiment name (default: the spec's name)");
  cmd->add_option("--only", opts->only, "Only these shapes (labels)")->delimiter(',');
  cmd->add_option("--runs", opts->runs, "Folder of run records (default: $DDPCTL_RUNS or ./runs)");
  cmd->add_option("--templates", opts->templates, "Folder with sbatch.sh.mustache");
  cmd->add_flag("--one-at-a-time", opts->one_at_a_time,
                "Each run waits for the previous one to end (Slurm dependency afterany), so runs do not compete");
  cmd->add_flag("--dry-run", opts->dry_run, "Validate and preflight only; submit nothing");
  cmd->add_flag("--no-preflight", opts->no_preflight, "Skip the checks against sinfo and sacctmgr");
  cmd->add_flag("--again", opts->again, "Submit even shapes whose earlier run is still queued or running");
  cmd->callback([opts] { run_sweep(*opts); });
}

}  // namespace ddpctl::cli
