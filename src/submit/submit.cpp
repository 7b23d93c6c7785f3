#include "submit/submit.hpp"

#include <filesystem>
#include <fmt/format.h>

#include "explain/failure.hpp"
#include "base/files.hpp"
#include "runs/job_states.hpp"
#include "runs/progress_read.hpp"
#include "script/preflight.hpp"
#include "slurm/site_limits_read.hpp"
#include "slurm/reasons.hpp"
#include "base/values.hpp"
#include "script/render.hpp"
#include "script/snapshot.hpp"
#include "runs/snapshot_record.hpp"
#include "script/snapshot_workdir.hpp"
#include "base/text.hpp"
#include "script/run_create.hpp"

namespace ddpctl {

void create_output_dir(const ResolvedRun& resolved) {
  std::error_code ec;
  std::filesystem::create_directories(resolved.spec.output_dir, ec);
  if (ec)
    throw UserError(resolved.spec.where_of("output_dir"), "output_dir",
                    "cannot create " + resolved.spec.output_dir + ": " + ec.message());
}

const ResolvedShape& choose_shape(const ResolvedRun& run, const std::string& label) {
  std::vector<std::string> labels;
  for (const auto& s : run.shapes) labels.push_back(s.label);
  if (label.empty()) {
    if (run.shapes.size() > 1)
      throw UserError(Location{run.spec.file}, "alternatives",
                      fmt::format("this spec has {} shapes ({}); choose one with --shape", labels.size(),
                                  join(labels, ", ")));
    return run.shapes.front();
  }
  for (const auto& s : run.shapes)
    if (s.label == label) return s;
  throw UserError(Location{"--shape"}, "", fmt::format("no shape labelled {}{}; shapes: {}", printable(label),
                                                      did_you_mean(label, labels), join(labels, ", ")));
}

bool submits_as_race(const ResolvedRun& run, const std::string& shape_label) {
  if (run.spec.has_sweep && shape_label.empty())
    throw UserError(run.spec.where_of("sweep"), "sweep",
                    "this spec is a sweep: `ddpctl sweep` submits one run per shape, `--shape LABEL` one of them");
  return run.shapes.size() > 1 && shape_label.empty();
}

namespace {

// The preflight of the one shape of `run_as`; with --fit-time and a
// reservation in the way, the shape's time limit in `run_as` and `recorded`
// becomes the longest that starts the job now, and is returned.
std::optional<long long> preflight_submit(ResolvedRun& run_as, ResolvedRun& recorded, const ResolvedShape& shape,
                                          const SubmitRequest& req, SlurmClient& slurm, Output& out) {
  SiteLimits limits;
  std::vector<ShapeLimits> verdicts = preflight_all(run_as, {&shape}, slurm, &limits);
  const Feasibility& f = verdicts.front().feasibility;
  for (const auto& n : unread_limits(limits)) out.note(n);
  if (req.fit_time && f.fit_time_s) {
    for (ResolvedRun* r : {&run_as, &recorded})
      for (auto& s : r->shapes)
        if (s.label == shape.label) set_time_limit(s, *f.fit_time_s);
    out.note(fmt::format("--fit-time: time limit {} instead of {}, so that it ends before reservation {} begins",
                         format_slurm_time(*f.fit_time_s), format_slurm_time(shape.time_s), f.reservation));
    for (const auto& n : f.not_now) out.warning("cannot start now: " + n);
    return f.fit_time_s;
  }
  for (const auto& w : limit_warnings(verdicts)) out.warning(w);
  if (req.fit_time)
    out.note(f.later.empty() ? "--fit-time: no reservation is in the way; the time limit stays " +
                                   format_slurm_time(shape.time_s)
                             : "--fit-time: no shorter time limit starts it now; submitted as it is");
  return std::nullopt;
}

// Submits the run's one shape; a UserError when sbatch rejected the job or
// its answer was unclear (the attempt is recorded either way).
Attempt submit_recorded_run(Run& run, const std::string& label, SlurmClient& slurm) {
  Attempt a = submit_attempt(run, *run.shape(label), slurm);
  if (a.outcome == Outcome::Rejected)
    throw UserError(Location{run.dir + "/" + a.script}, "", "sbatch rejected the job: " + a.reason);
  if (a.outcome != Outcome::Submitted)
    throw UserError(Location{run.dir + "/ledger.json"}, "",
                    fmt::format("sbatch's answer was unclear ({}); the attempt is recorded as unconfirmed. Run the "
                                "same `ddpctl submit` again: it looks the attempt up in Slurm by its token first and "
                                "submits only if no job was made",
                                a.reason));
  return a;
}

}  // namespace

SubmitResult submit_one(const ResolvedRun& resolved, const SubmitRequest& req, Context& ctx, Output& out) {
  SlurmClient& slurm = ctx.slurm;
  if (!req.rank_by.empty())
    throw UserError(Location{"--rank-by"}, "",
                    "ranks the shapes of a race, and this submission has one shape; `ddpctl race --plan` shows "
                    "when shapes would start");
  const ResolvedShape& shape = choose_shape(resolved, req.shape);
  std::string spec_text = read_file(req.spec);
  std::string identity = run_identity({{req.spec, spec_text}}, req.sets, shape.label);

  SubmitResult result;
  EarlierRuns earlier;
  // Held from the look at earlier runs until the outcome is recorded, so two
  // ddpctls submitting the same run make one job.
  std::optional<IdentityLock> lock;
  if (!req.dry_run) {
    lock.emplace(req.runs_root, identity, ctx, out);
    result.lock_waited_s = lock->waited_s();
    earlier = find_earlier_runs(req.runs_root, identity, slurm);
    if (earlier.active && !req.again) {
      result.kind = SubmitResult::Kind::AlreadySubmitted;
      result.active = *earlier.active;
      return result;
    }
  }
  if (req.fit_time && !req.preflight)
    throw UserError(Location{"--fit-time"}, "", "needs the preflight (it reads the reservations); drop --no-preflight");
  // The code the job will run, frozen now (a dry run takes none).
  ResolvedRun run_as = resolved;
  ResolvedRun recorded = resolved;  // with --fit-time's time limit, if it set one
  SnapshotDecision snap;
  if (!req.dry_run) {
    std::string cwd = std::filesystem::current_path().string();
    snap = take_snapshot(resolved.spec, cwd, req.runs_root, !req.snapshot, ctx.runner, req.snapshot_from);
    apply_snapshot(run_as, snap, cwd);
  }
  if (req.preflight) result.fitted_time_s = preflight_submit(run_as, recorded, shape, req, slurm, out);
  // The run's folder name is known before its scripts are rendered: they
  // name its checkpoint folder. An earlier attempt retried keeps its own.
  const bool retry = earlier.retry && !req.again;
  std::string id = retry ? earlier.retry->id : new_run_id(resolved.spec.name, utc_now_iso());
  std::string checkpoints = set_checkpoint_folder(run_as, absolute_path(run_as.spec.output_dir + "/" + id));
  set_run_dir(run_as, absolute_path(req.runs_root + "/" + id));
  std::vector<RenderedScript> rendered = render_scripts(run_as, req.templates_dir);
  for (const auto& w : container_warnings(run_as)) out.warning(w);
  if (req.dry_run) {
    result.kind = SubmitResult::Kind::DryRun;
    result.would_run = fmt::format("sbatch --parsable --comment=ddpctl:<token> --chdir={} <run dir>/{}",
                                   std::filesystem::current_path().string(), shape.script_name);
    return result;
  }

  create_output_dir(resolved);
  create_checkpoint_folder(run_as, checkpoints);
  std::vector<std::pair<std::string, std::string>> scripts;
  for (const auto& s : rendered) scripts.emplace_back(s.file_name, s.text);
  // An earlier attempt of this spec that made no job is retried in its own run,
  // so the ledger tells the whole story.
  Run run;
  if (retry) {
    run = *earlier.retry;
    for (const auto& [file, text] : scripts) write_file_atomic(run.dir + "/" + file, text, 0755);
  } else {
    run = create_run(req.runs_root, {{&recorded, spec_text}}, req.sets, identity, scripts, id);
  }
  record_snapshot(run.dir, snap);
  result.attempt = submit_recorded_run(run, shape.label, slurm);
  result.run = run;
  return result;
}

void wait_for_job(Context& ctx, const Run& run, const Attempt& attempt, bool follow, Output& out) {
  std::string last;
  EndWatcher end(ctx.clock);
  const RunShape* shape = run.shape(attempt.shape);
  std::string progress_file =
      shape ? progress_path(shape->output_dir, shape->job_name, attempt.job_id) : std::string();
  for (;;) {
    JobStates states = lookup_jobs(ctx.slurm, {attempt.job_id});
    const Job& job = states.jobs.at(attempt.job_id);
    std::string line;
    if (job.state == JobState::Pending) {
      line = "PENDING";
      if (auto why = explain_reason(job.reason); !why.empty()) line += " (" + why + ")";
      if (job.start_time && *job.start_time > ctx.clock.now()) line += ", estimated start " + clock_time(*job.start_time);
    } else if (job.state == JobState::Running) {
      line = "RUNNING on " + job.nodes;
      if (follow)
        if (auto p = read_progress(progress_file); p || shape) {
          if (!p) p = pattern_progress(*shape, job, ctx.clock.now());
          if (p) line += "  " + format_progress(*p);
        }
    } else {
      line = state_name(job.state);
      if (auto why = explain_reason(job.reason); !why.empty()) line += " (" + why + ")";
    }
    if (line != last) {
      out.state_line(fmt::format("job {}: ", attempt.job_id), line, tone_of(job.state));
      last = line;
    }
    if (job.state == JobState::Unknown && states.queue_answered)
      throw UserError(fmt::format("job {} left the queue and its end cannot be read ({})", attempt.job_id,
                                  job.reason));
    if (end.ended(job)) {
      if (job.state == JobState::Completed) return;
      // Which rank failed first, where, how, and its last words.
      std::string how = describe_exit(job.exit);
      std::string logs_note;
      if (shape) {
        if (auto f = explain_failure(*shape, job, ctx.slurm)) {
          how = describe_failure(*f);
          if (f->rank) logs_note = fmt::format(" (it opens rank {})", *f->rank);
        }
      }
      throw UserError(fmt::format("job {} ended {}{}; see `ddpctl logs {}`{}", attempt.job_id, state_name(job.state),
                                  how.empty() ? "" : ": " + how, run.id, logs_note));
    }
    bool started = job.state != JobState::Pending && job.state != JobState::Unknown &&
                   job.state != JobState::Configuring;
    if (!follow && started && !is_terminal(job.state)) return;
    ctx.clock.sleep(ctx.poll_s);
  }
}

}  // namespace ddpctl
