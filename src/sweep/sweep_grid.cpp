#include "sweep/sweep_grid.hpp"

#include <filesystem>
#include <fmt/format.h>

#include "base/files.hpp"
#include "base/paths.hpp"
#include "explain/race.hpp"
#include "runs/race_gate_files.hpp"
#include "script/resolve_grid.hpp"
#include "script/preflight.hpp"
#include "slurm/site_limits_read.hpp"
#include "script/snapshot.hpp"
#include "slurm/job_array.hpp"
#include "sweep/grid_array_submit.hpp"
#include "sweep/grid_continuation.hpp"
#include "sweep/grid_limits.hpp"
#include "sweep/grid_scripts.hpp"
#include "race/race_submit.hpp"
#include "runs/snapshot_record.hpp"
#include "script/snapshot_workdir.hpp"
#include "explain/status_grid.hpp"
#include "submit/submit.hpp"
#include "base/text.hpp"
#include "script/run_create.hpp"

namespace ddpctl {

namespace fs = std::filesystem;

namespace {

std::vector<std::string> labels_of(const std::vector<GridArray>& arrays) {
  std::vector<std::string> labels;
  for (const GridArray& a : arrays) labels.push_back(a.label);
  return labels;
}

// --only and --one-at-a-time are a `sweep:` list's; a grid says both in the spec.
void refuse_list_options(const SweepRequest& o) {
  if (!o.only.empty())
    throw UserError(Location{"--only"}, "", "picks shapes of a `sweep:` list; a grid's cells are chosen in the spec "
                                            "(grid: and its include: and exclude:)");
  if (o.one_at_a_time)
    throw UserError(Location{"--one-at-a-time"}, "",
                    "is for a `sweep:` list of shapes; a grid runs grid.max_parallel cells at once (`max_parallel: 1` "
                    "under `grid:`: one at a time, each shape's array after the previous one ends)");
}

// The preflight of each array's shape; its site limits are the ones the
// submit limits are checked against.
SiteLimits preflight_arrays(const std::vector<GridArray>& arrays, SlurmClient& slurm, Output& out) {
  SiteLimits limits;
  for (const GridArray& a : arrays) {
    std::vector<ShapeLimits> verdicts = preflight_all(*a.first, {a.shape}, slurm, &limits);
    for (const auto& w : limit_warnings(verdicts)) out.warning(fmt::format("shape {}: {}", a.label, w));
  }
  for (const auto& n : unread_limits(limits)) out.note(n);
  return limits;
}

// Every task counts against MaxSubmitJobs and its kin (grid_limits.hpp).
void check_submit_limits(const SweepRequest& o, const ResolvedGrid& g, const std::vector<GridArray>& arrays,
                         const SiteLimits& limits, Output& out) {
  if (!o.preflight) return;
  for (const auto& asked : grid_submit_cases(arrays, is_raced(g), g.grid.cells.size()))
    refuse_over_submit_limits(grid_submit_asks(asked, limits), limits, SubmitWhat::Grid, g.grid.where, out);
}

void print_dry_run(const SweepRequest& o, const ResolvedGrid& g, const std::vector<GridArray>& arrays, Output& out) {
  out.line(fmt::format("dry run: {} passed validation{}: {} cell(s); nothing was submitted", o.spec,
                       o.preflight ? " and the cluster preflight" : "", g.grid.cells.size()));
  if (is_raced(g)) {
    out.line(fmt::format("would race cell {} on shapes {} (each --array=0); the first to start trains it and "
                         "submits the other {} cell(s) as one job array on its shape, --array={}",
                         g.grid.cells[0].name, join(labels_of(arrays), ", "), g.grid.cells.size() - 1,
                         format_array(rest_of_grid(g.grid.cells.size()), g.grid.max_parallel)));
    return;
  }
  for (const GridArray& a : arrays)
    out.line(fmt::format("would submit shape {}: {} cell(s) as one job array, --array={}", a.label, a.cells.size(),
                         format_array(a.cells, g.grid.max_parallel)));
  if (g.grid.max_parallel == 1 && arrays.size() > 1)
    out.line("one cell at a time (max_parallel: 1): each array after the previous one ends");
}

// The scripts first, then the cells' folders, then the run's record: a new
// run `id`, or the earlier sweep of this spec that made no job (`retry`).
Run record_grid_run(const SweepRequest& o, ResolvedGrid& g, const std::vector<GridArray>& arrays,
                    const std::string& identity, const std::string& id, const Run* retry) {
  const std::string run_dir = absolute_path((fs::path(o.runs_root) / id).string());
  FileBatch scripts(run_dir, 0755);
  GridPlan plan = plan_grid(g, run_dir, id, o.templates_dir,
                            [&](const std::string& file, const std::string& text) { scripts.write(file, text); });
  scripts.commit();
  for (const auto& c : plan.grid.cells) {
    std::error_code ec;
    fs::create_directories(c.dir, ec);
    if (ec) throw UserError(Location{c.dir}, "", "cannot create the cell's folder: " + ec.message());
  }
  for (const auto& c : plan.checkpoint_folders) create_checkpoint_folder(g.cells.at(0), c);
  Run run;
  if (retry) {
    run = *retry;
  } else {
    // One shape per array: its first cell's, labelled as the array.
    std::vector<ResolvedRun> parts_runs;
    for (const GridArray& a : arrays) {
      ResolvedRun r = *a.first;
      r.shapes = {*a.shape};
      r.shapes.at(0).label = a.label;
      r.shapes.at(0).script_name = a.script;
      parts_runs.push_back(std::move(r));
    }
    std::vector<RunPart> parts;
    for (const auto& r : parts_runs) parts.push_back({&r, g.text});
    run = create_run(o.runs_root, parts, o.sets, identity, {}, id);
  }
  run.grid = plan.grid;
  save_grid(run);
  return run;
}

// Race, then sweep: cell 0 races the shapes (each a one-task array); its
// winner submits the rest (continue_raced_grid).
void race_first_cell(Run& run, const ResolvedGrid& g, const std::vector<GridArray>& arrays, Context& ctx,
                     Output& out) {
  init_race(run);
  if (g.across.on()) init_gate(run, g.across.coordinator, g.across.site, g.across.gate_s);
  std::vector<std::string> submitted = submit_race_shapes(run, labels_of(arrays), 1, ctx.slurm, out, "0");
  if (submitted.empty())
    throw UserError(Location{run.dir + "/ledger.json"}, "", "no shape of the race could be submitted");
  out.line(fmt::format("sweep {}: racing cell {} as {}: the first shape to start trains it and submits the other "
                       "{} cell(s) as one job array on its shape\n  status: ddpctl status {}\n  report: ddpctl "
                       "report {}",
                       run.id, g.grid.cells[0].name, join(submitted, ", "), g.grid.cells.size() - 1, run.id, run.id));
  // A shape that started at once may have won already (its own
  // continuation waits for this lock, and then finds the work done).
  if (read_race(run).claimed()) {
    GridContinuation c = continue_raced_grid(run, ctx, out, true);
    if (!c.submitted && !c.why_not.empty()) out.note(c.why_not);
  }
}

void submit_arrays(Run& run, const ResolvedGrid& g, const std::vector<GridArray>& arrays, SlurmClient& slurm,
                   Output& out) {
  int failed = 0;
  long long max_size = max_array_size(slurm);
  std::string previous;  // max_parallel: 1 over several arrays: one after another
  const bool chained = g.grid.max_parallel == 1 && arrays.size() > 1;
  for (const GridArray& a : arrays) {
    const RunShape* shape = run.shape(a.label);
    if (!shape) throw std::logic_error("grid sweep: no shape " + a.label);
    failed += submit_grid_cells(run, *shape, a.cells, g.grid.max_parallel, max_size, slurm, out, "submitted",
                                chained ? &previous : nullptr);
  }
  out.line(fmt::format("sweep {}: {} cell(s) in {} array(s){}\n  status: ddpctl status {}\n  report: ddpctl report {}",
                       run.id, g.grid.cells.size(), arrays.size(),
                       failed ? fmt::format(", {} array(s) not submitted", failed) : "", run.id, run.id));
  if (failed)
    throw UserError(Location{run.dir + "/ledger.json"}, "",
                    fmt::format("{} of the sweep's arrays were not submitted; re-run the same `ddpctl sweep`: it looks "
                                "unclear attempts up by their token first",
                                failed));
}

}  // namespace

void run_grid_sweep(const SweepRequest& o, Context& ctx, Output& out) {
  SlurmClient& slurm = ctx.slurm;
  ResolvedGrid g = load_grid(o.spec, o.sets, o.templates_dir, o.across.site);
  g.across = o.across;
  refuse_list_options(o);
  std::vector<GridArray> arrays = group_cells(g);
  std::vector<std::string> identity_sets = o.sets;
  if (o.across.on()) identity_sets.push_back("--site=" + o.across.site);
  std::string identity = run_identity({{o.spec, g.text}}, identity_sets, "grid");
  SiteLimits limits = o.preflight ? preflight_arrays(arrays, slurm, out) : SiteLimits{};
  if (o.dry_run) {
    check_submit_limits(o, g, arrays, limits, out);
    return print_dry_run(o, g, arrays, out);
  }

  // Held from the look at earlier runs until the last outcome is recorded,
  // so two ddpctls sweeping the same spec make one set of arrays.
  IdentityLock lock(o.runs_root, identity, ctx, out);
  EarlierRuns earlier = find_earlier_runs(o.runs_root, identity, slurm);
  if (earlier.active && !o.again) {
    out.line(fmt::format("already submitted: job array {} of sweep {} is still queued or running (`ddpctl status {}`; "
                         "--again submits the grid once more)",
                         earlier.active->job_id, earlier.active->run_id, earlier.active->run_id));
    // A raced grid whose winner could not submit the other cells itself.
    Run active = find_run(o.runs_root, earlier.active->run_id);
    if (active.grid && active.grid->raced && read_race(active).claimed()) continue_raced_grid(active, ctx, out, true);
    return;
  }
  check_submit_limits(o, g, arrays, limits, out);  // here, so that a sweep already queued is "already submitted", not over a limit
  for (auto& cell : g.cells) create_output_dir(cell);
  std::string cwd = fs::current_path().string();
  SnapshotDecision snap = take_snapshot(g.cells.at(0).spec, cwd, o.runs_root, !o.snapshot, ctx.runner, o.snapshot_from);
  for (auto& cell : g.cells) apply_snapshot(cell, snap, cwd);

  // An earlier sweep of this spec that made no job is retried in its own run.
  bool retry = earlier.retry && !o.again;
  std::string id = retry ? earlier.retry->id : new_run_id(g.cells[0].spec.name, utc_now_iso());
  Run run = record_grid_run(o, g, arrays, identity, id, retry ? &*earlier.retry : nullptr);
  record_snapshot(run.dir, snap);
  if (is_raced(g)) return race_first_cell(run, g, arrays, ctx, out);
  submit_arrays(run, g, arrays, slurm, out);
}

}  // namespace ddpctl
