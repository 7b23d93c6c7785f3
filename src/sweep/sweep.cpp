#include "sweep/sweep.hpp"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>

#include "base/files.hpp"
#include "script/preflight.hpp"
#include "slurm/site_limits_read.hpp"
#include "script/render.hpp"
#include "runs/snapshot_record.hpp"
#include "script/snapshot_workdir.hpp"
#include "spec/spec.hpp"
#include "submit/submit.hpp"
#include "sweep/sweep_grid.hpp"
#include "base/text.hpp"
#include "base/values.hpp"
#include "base/yaml_reader.hpp"
#include "script/run_create.hpp"

namespace ddpctl {

std::string sweep_list_note(const std::string& spec_file, bool one_at_a_time) {
  YAML::Node entries;
  try {
    YAML::Node root = YAML::Load(read_file(spec_file));
    if (!root.IsMap() || !root["sweep"] || !root["sweep"].IsSequence()) return "";
    entries = root["sweep"];
  } catch (const std::exception&) {
    return "";
  }
  std::string yaml = "    grid:\n      include:";
  for (const auto& entry : entries) {
    YAML::Emitter e;
    e.SetMapFormat(YAML::Flow);
    e.SetSeqFormat(YAML::Flow);
    e << entry;
    yaml += std::string("\n        - ") + e.c_str();
  }
  yaml += "\n      max_parallel: 1";
  return std::string("`sweep:` is the old spelling of a grid of shapes, still read as before. As a grid (one sweep, "
                     "one job array per shape, the same scaling table from `ddpctl report`; docs/sweeps.md), in place "
                     "of `sweep:`:\n") +
         yaml +
         (one_at_a_time ? "   # one cell at a time, as --one-at-a-time did"
                        : "   # one cell at a time, if the shapes should not compete (--one-at-a-time); without "
                          "it they all run at once, as now");
}

std::vector<const ResolvedShape*> chosen_shapes(const ResolvedRun& resolved, const std::vector<std::string>& only) {
  std::vector<const ResolvedShape*> chosen;
  std::vector<std::string> labels;
  for (const auto& s : resolved.shapes) labels.push_back(s.label);
  for (const auto& s : resolved.shapes)
    if (only.empty() || std::find(only.begin(), only.end(), s.label) != only.end()) chosen.push_back(&s);
  for (const auto& l : only)
    if (std::find(labels.begin(), labels.end(), l) == labels.end())
      throw UserError(Location{"--only"}, "", fmt::format("no sweep shape labelled {}{}; shapes: {}", printable(l),
                                                         did_you_mean(l, labels), join(labels, ", ")));
  return chosen;
}

namespace {

void print_dry_run(const SweepRequest& o, const std::vector<const ResolvedShape*>& chosen, Output& out) {
  std::vector<std::string> picked;
  for (const ResolvedShape* s : chosen) picked.push_back(s->label);
  out.line(fmt::format("dry run: {} passed validation{}; nothing was submitted", o.spec,
                       o.preflight ? " and the cluster preflight" : ""));
  out.line(fmt::format("would submit one run per shape: {}{}", join(picked, ", "),
                       o.one_at_a_time ? ", one at a time (each after the previous ends)" : ""));
}

// One shape of the sweep as its own run, recorded in the experiment; with
// --one-at-a-time after `previous_job` ends. Returns false when sbatch did
// not make its job; `previous_job` becomes its job.
bool submit_sweep_shape(const SweepRequest& o, const ResolvedRun& resolved, const ResolvedShape& shape,
                        const std::string& spec_text, const SnapshotDecision& snap, Experiment& experiment,
                        std::string& previous_job, Context& ctx, Output& out) {
  // The same identity as `submit --shape LABEL`: re-running a sweep does not
  // duplicate a run whose job is still queued or running.
  std::string identity = run_identity({{o.spec, spec_text}}, o.sets, shape.label);
  IdentityLock lock(o.runs_root, identity, ctx, out);
  EarlierRuns earlier = find_earlier_runs(o.runs_root, identity, ctx.slurm);
  if (earlier.active && !o.again) {
    out.line(fmt::format("shape {}: already submitted, job {} of run {} is still queued or running", shape.label,
                         earlier.active->job_id, earlier.active->run_id));
    experiment.runs.emplace_back(shape.label, earlier.active->run_id);
    save_experiment(experiment);
    previous_job = earlier.active->job_id;
    return true;
  }
  ResolvedRun one = resolved;
  one.shapes = {shape};
  // Each shape is a run of its own, with a checkpoint folder of its own.
  std::string id = new_run_id(resolved.spec.name, utc_now_iso());
  create_checkpoint_folder(one, set_checkpoint_folder(one, absolute_path(one.spec.output_dir + "/" + id)));
  set_run_dir(one, absolute_path(o.runs_root + "/" + id));
  std::vector<std::pair<std::string, std::string>> files;
  for (const auto& s : render_scripts(one, o.templates_dir)) files.emplace_back(s.file_name, s.text);
  Run run = create_run(o.runs_root, {{&one, spec_text}}, o.sets, identity, files, id);
  record_snapshot(run.dir, snap);
  experiment.runs.emplace_back(shape.label, run.id);
  save_experiment(experiment);
  std::vector<std::string> extra;
  std::string after = o.one_at_a_time ? previous_job : "";
  if (!after.empty()) extra.push_back("--dependency=afterany:" + after);
  Attempt a = submit_attempt(run, run.shapes.front(), ctx.slurm, extra);
  if (a.outcome == Outcome::Submitted) {
    previous_job = a.job_id;
    out.line(fmt::format("shape {}: submitted job {}{} as run {}", shape.label, a.job_id,
                         after.empty() ? "" : " (starts after job " + after + " ends)", run.id));
    return true;
  }
  out.error(fmt::format("shape {}: {}: {} (recorded in {}/ledger.json)", shape.label,
                        a.outcome == Outcome::Rejected ? "sbatch rejected the job" : "sbatch's answer was unclear",
                        a.reason, run.dir));
  return false;
}

}  // namespace

void run_sweep(const SweepRequest& o, Context& ctx, Output& out) {
  SlurmClient& slurm = ctx.slurm;
  RunSpec spec = load_run_spec(o.spec, o.sets);
  if (spec.names_sites && !spec.has_grid)
    throw UserError(spec.where_of("on"), "on",
                    "this spec names its sites (`on:`) and has a `sweep:` list: each shape of a list is a run of its "
                    "own, not raced; a list is swept at one site (`ddpctl sweep SPEC --on HOST` without `on:`), and "
                    "a `grid:` is raced across sites (docs/race.md \"Across sites\")");
  if (spec.has_grid) return run_grid_sweep(o, ctx, out);
  ResolvedRun resolved = load_and_resolve(o.spec, o.sets);
  if (resolved.spec.has_sweep)
    if (std::string note = sweep_list_note(o.spec, o.one_at_a_time); !note.empty()) out.note(note);
  if (!resolved.spec.has_sweep)
    throw UserError(Location{o.spec}, "sweep",
                    "this spec has no `sweep:` list of shapes (e.g. `sweep: [{nodes: 1, gpus_per_node: 1}, {nodes: 2, "
                    "gpus_per_node: 1}]`); `ddpctl submit` runs a single shape");
  std::vector<const ResolvedShape*> chosen = chosen_shapes(resolved, o.only);
  std::string spec_text = read_file(o.spec);
  std::string experiment_name = o.name.empty() ? resolved.spec.name : o.name;
  if (!is_run_name(experiment_name))
    throw UserError(Location{"--name"}, "", "an experiment name is letters, digits, '.', '_' or '-' (at most 64)");
  if (o.preflight) {
    SiteLimits limits;
    std::vector<ShapeLimits> verdicts = preflight_all(resolved, chosen, slurm, &limits);
    for (const auto& w : limit_warnings(verdicts)) out.warning(w);
    for (const auto& n : unread_limits(limits)) out.note(n);
  }
  if (o.dry_run) return print_dry_run(o, chosen, out);
  create_output_dir(resolved);
  // One snapshot for every run of the sweep.
  std::string cwd = std::filesystem::current_path().string();
  SnapshotDecision snap = take_snapshot(resolved.spec, cwd, o.runs_root, !o.snapshot, ctx.runner, o.snapshot_from);
  apply_snapshot(resolved, snap, cwd);
  Experiment experiment = create_experiment(o.runs_root, experiment_name, o.spec, o.one_at_a_time);
  std::string previous_job;
  int failed = 0;
  for (const ResolvedShape* shape : chosen)
    if (!submit_sweep_shape(o, resolved, *shape, spec_text, snap, experiment, previous_job, ctx, out)) ++failed;
  out.line(fmt::format("experiment {}: {} run(s){}\n  status: ddpctl status {}\n  report: ddpctl report {}",
                       experiment.id, experiment.runs.size(), failed ? fmt::format(", {} not submitted", failed) : "",
                       experiment.name, experiment.name));
  if (failed)
    throw UserError(Location{experiment.file}, "",
                    fmt::format("{} of the sweep's shapes were not submitted; re-run `ddpctl sweep` to retry them "
                                "(runs already queued are not submitted again)",
                                failed));
}

}  // namespace ddpctl
