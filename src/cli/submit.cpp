// ddpctl submit SPEC: validate, preflight, record, sbatch, record; a spec
// with alternatives is submitted as a race (race.cpp).
#include <fmt/format.h>
#include <iostream>
#include <memory>

#include "cli/app.hpp"
#include "cli/common.hpp"
#include "explain/experiments.hpp"
#include "runs/run_store.hpp"
#include "submit/study_trial.hpp"
#include "script/preemption_note.hpp"
#include "runs/run_json.hpp"
#include "runs/snapshot_record.hpp"
#include "base/paths.hpp"
#include "spec/spec.hpp"
#include "sites/sites_submit.hpp"
#include "submit/submit.hpp"

namespace ddpctl::cli {

namespace {

struct SubmitOptions {
  SubmitRequest req;
  std::string runs, templates;
  bool no_preflight = false, wait = false, follow = false, no_snapshot = false;
  std::string study, trial;  // --study NAME --trial N: the run is that study's trial (ddpctl tune)
  RemoteOptions remote;
};

// The run just submitted (or already queued) as the study's trial; its id
// from the submission, else the latest run of the spec's name (a race).
void record_study_trial(const SubmitOptions& o, const ResolvedRun& resolved, const std::string& run_id) {
  if (o.study.empty()) return;
  std::string id = run_id.empty() ? find_run(o.req.runs_root, resolved.spec.name).id : run_id;
  Experiment e = add_study_run(o.req.runs_root, o.study, o.req.spec, o.trial, id);
  ConsoleOutput().fact("study", nlohmann::json{{"name", e.name}, {"id", e.id}, {"trial", o.trial}});
}

// A spec that names its sites (`on:`) is one run raced across them
// (docs/race.md "Across sites"); false for any other spec.
bool submit_across_sites_if_named(const SubmitOptions& o, Context& ctx) {
  if (!load_run_spec(o.req.spec, o.req.sets).names_sites) return false;
  auto refuse = [](const char* option, const char* why) { throw UserError(Location{option}, "", why); };
  if (!o.req.shape.empty())
    refuse("--shape", "picks one shape; a spec that names its sites races its shapes at every site");
  if (o.req.dry_run) refuse("--dry-run", "is not taken by a race across sites yet: `ddpctl gen SPEC --site HOST` shows a site's scripts");
  if (!o.study.empty()) refuse("--study", "is not taken by a race across sites yet: a study's trials race within a site");
  if (o.wait || o.follow)
    refuse(o.wait ? "--wait" : "--follow",
           "is not taken by a race across sites: its coordinator's log (runs/RUN/coordinator.log) follows it");
  SitesSubmitRequest r;
  r.spec = o.req.spec;
  r.sets = o.req.sets;
  r.runs_root = runs_root(o.runs);
  r.snapshot = !o.no_snapshot;
  r.again = o.req.again;
  r.gate_s = o.req.across.gate_s;
  r.preflight = !o.no_preflight;
  r.self = executable_dir() + "/ddpctl";
  ConsoleOutput out;
  submit_across_sites(r, ctx, out);
  return true;
}

void run_submit(SubmitOptions& o, Context& ctx) {
  check_study_trial(o.study, o.trial);
  if (!o.study.empty() && o.req.dry_run)
    throw UserError(Location{"--study"}, "", "records a submitted run: not with --dry-run");
  // With --on, the ddpctl there reads the spec (and races its sites from there).
  if (o.req.across.site.empty() && !remote_asked(o.remote) && submit_across_sites_if_named(o, ctx)) return;
  submit_on_remote_if_asked(o.remote, {{o.req.spec}, o.req.sets, o.runs, !o.no_snapshot, o.req.dry_run}, ctx);
  if (auto own = trial_checkpoint_set(o.req.spec, o.req.sets, o.study, o.trial)) o.req.sets.push_back(*own);
  o.req.runs_root = runs_root(o.runs);
  o.req.templates_dir = templates_dir(o.templates);
  o.req.preflight = !o.no_preflight;
  o.req.snapshot = !o.no_snapshot;
  ResolvedRun resolved = load_and_resolve(o.req.spec, o.req.sets, o.req.across.site);
  if (o.req.across.on() && !o.req.shape.empty())
    throw UserError(Location{"--shape"}, "", "picks one shape here; a site of a race across sites races its own shapes");
  // What a preemption would do, where a shape runs on preemptible capacity.
  for (const auto& n : preemption_notes(resolved)) ConsoleOutput().note(n);
  if (submits_as_race(resolved, o.req.shape) || o.req.across.on()) {
    race_command(race_of_submit(o.req), false, o.wait, o.follow, ctx);
    return record_study_trial(o, resolved, "");
  }
  ConsoleOutput out;
  SubmitResult r = submit_one(resolved, o.req, ctx, out);
  note_lock_wait(r.lock_waited_s);
  switch (r.kind) {
    case SubmitResult::Kind::AlreadySubmitted:
      out.fact("already", true);
      out.fact("run", r.active.run_id);
      out.fact("jobs", nlohmann::json::array({{{"job", r.active.job_id}, {"run", r.active.run_id}}}));
      record_study_trial(o, resolved, r.active.run_id);
      std::cout << fmt::format(
          "already submitted: job {} of run {} is still queued or running; not submitting it again "
          "(--again submits another)\n",
          r.active.job_id, r.active.run_id);
      return;
    case SubmitResult::Kind::DryRun:
      out.fact("dry_run", true);
      out.fact("would_run", r.would_run);
      std::cout << fmt::format("dry run: {} passed validation{}; nothing was submitted\n", o.req.spec,
                               o.req.preflight ? " and the cluster preflight" : "");
      std::cout << "would run: " << r.would_run << '\n';
      return;
    case SubmitResult::Kind::Submitted:
      break;
  }
  const Attempt& a = r.attempt;
  state_run(out, r.run);
  record_study_trial(o, resolved, r.run.id);
  std::cout << fmt::format("submitted job {}{} (shape {}) as run {}\n", a.job_id,
                           a.cluster.empty() ? "" : " on cluster " + a.cluster, a.shape, r.run.id);
  std::cout << "  code:   " << snapshot_summary(r.run.dir) << '\n';
  std::cout << fmt::format("  status: ddpctl status {}\n  logs:   ddpctl logs {}\n", r.run.id, r.run.id);
  if (o.wait || o.follow) wait_for_job(ctx, r.run, a, o.follow, out);
}

}  // namespace

void setup_submit(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<SubmitOptions>();
  CLI::App* cmd = app.add_subcommand("submit", "Validate a run spec, check it against the cluster, and submit it");
  cmd->add_option("spec", o->req.spec, "Run spec (YAML)")->required();
  cmd->add_option("--set", o->req.sets, "Override a spec field: KEY=VALUE with a dotted KEY");
  cmd->add_option("--shape", o->req.shape, "Submit the shape with this label (specs with alternatives)");
  cmd->add_option("--runs", o->runs, "Folder of run records (default: $DDPCTL_RUNS or ./runs)");
  cmd->add_option("--templates", o->templates, "Folder with template parts to use instead of the bundled ones");
  cmd->add_flag("--wait", o->wait, "Show progress until the job starts");
  cmd->add_flag("--follow", o->follow, "Show progress until the job ends (implies --wait)");
  cmd->add_flag("--dry-run", o->req.dry_run, "Validate and preflight only; submit nothing");
  cmd->add_flag("--no-preflight", o->no_preflight, "Skip the checks against sinfo and sacctmgr, and the program lookup");
  cmd->add_flag("--no-snapshot", o->no_snapshot,
                "Run the submit folder's files as they are when the job starts, not a copy taken now");
  cmd->add_flag("--fit-time", o->req.fit_time,
                "When a reservation (e.g. maintenance) holds the nodes before the time limit would end, submit "
                "with the longest time limit that starts now");
  cmd->add_flag("--again", o->req.again, "Submit even if a job of this same spec is still queued or running");
  cmd->add_option("--study", o->study,
                  "Record the run as a trial of this study (ddpctl tune does): `ddpctl report STUDY` lists its "
                  "trials by parameter");
  cmd->add_option("--trial", o->trial, "The trial's number in --study");
  add_rank_by_options(cmd, o->req.rank_by);
  add_remote_submit_options(cmd, o->remote, o->req.snapshot_from);
  add_site_options(cmd, o->req.across);
  cmd->callback([o, &ctx] { run_submit(*o, ctx); });
}

}  // namespace ddpctl::cli
