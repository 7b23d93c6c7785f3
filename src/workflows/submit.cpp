#include "workflows/submit.hpp"

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <unistd.h>
#include <fmt/format.h>
#include <map>

#include "explain/failure.hpp"
#include "base/files.hpp"
#include "runs/jobs.hpp"
#include "runs/progress_read.hpp"
#include "base/lock.hpp"
#include "script/preflight.hpp"
#include "slurm/reasons.hpp"
#include "base/values.hpp"
#include "script/render.hpp"
#include "script/snapshot.hpp"
#include "script/snapshot_record.hpp"
#include "base/text.hpp"

namespace ddpctl {

namespace {

long long min_job_age_s(SlurmClient& slurm) {
  auto config = slurm.config();
  auto it = config.find("MinJobAge");
  if (it == config.end()) return 300;  // Slurm's default
  return std::atoll(it->second.c_str());
}

}  // namespace

Lookup find_job_by_token(SlurmClient& slurm, const std::string& token, long long intent_time) {
  Lookup out;
  JobQuery queue = slurm.queue();
  if (queue.answered) {
    for (const auto& job : queue.jobs)
      if (comment_has_token(job.comment, token)) {
        out.presence = Presence::Found;
        out.job = job;
        return out;
      }
  }
  JobQuery acct = slurm.accounting({}, intent_time - 120);
  if (acct.answered) {
    bool comments_kept = false;
    for (const auto& job : acct.jobs) {
      if (!job.comment.empty()) comments_kept = true;
      if (comment_has_token(job.comment, token)) {
        out.presence = Presence::Found;
        out.job = job;
        return out;
      }
    }
    // sacct only proves absence where it stores comments (AccountingStoreFlags=job_comment).
    if (comments_kept && queue.answered) {
      out.presence = Presence::Absent;
      return out;
    }
  }
  if (queue.answered) {
    // squeue keeps every job for MinJobAge after it ends: within that window
    // its silence is proof.
    long long age = static_cast<long long>(std::time(nullptr)) - intent_time;
    if (age >= 0 && age + 5 < min_job_age_s(slurm)) {
      out.presence = Presence::Absent;
      return out;
    }
    out.why = "squeue does not show it, but the attempt is older than MinJobAge and sacct cannot tell";
    return out;
  }
  out.why = "Slurm could not be asked: " + queue.error;
  return out;
}

std::vector<Attempt> settle_attempts(Run& run, SlurmClient& slurm) {
  std::vector<Attempt> unsettled;
  std::vector<Attempt> decided;
  for (const auto& attempt : run.attempts) {
    if (attempt.settled()) continue;
    Attempt a = attempt;
    // Its own ddpctl still runs here: its sbatch may still submit, so it is
    // in flight, never absent (that ddpctl records the outcome itself).
    if (a.pid != getpid() && process_alive_here(a.pid, a.host)) {
      a.reason = fmt::format("ddpctl {} is still submitting it", a.pid);
      unsettled.push_back(a);
      continue;
    }
    Lookup l = find_job_by_token(slurm, a.token, parse_utc_iso(a.intent_at));
    if (l.presence == Presence::Found) {
      a.outcome = Outcome::Submitted;
      a.job_id = submission_id(l.job);
      a.reason = "confirmed by looking up its token in " + l.job.source;
    } else if (l.presence == Presence::Absent) {
      a.outcome = Outcome::Absent;
      a.reason = "Slurm has no job with its token";
    } else {
      a.reason = l.why;
      unsettled.push_back(a);
      continue;
    }
    a.decided_at = utc_now_iso();
    decided.push_back(a);
  }
  if (!decided.empty())
    update_ledger(run, [&](std::vector<Attempt>& attempts) {
      for (const auto& d : decided) {
        Attempt& rec = attempt_by_token(attempts, d.token);
        if (!rec.settled()) rec = d;  // another ddpctl may have settled it meanwhile
      }
    });
  return unsettled;
}

int adopt_found_jobs(Run& run, const std::vector<Job>& queue) {
  std::vector<std::pair<std::string, Job>> found;
  for (const auto& a : run.attempts) {
    if (a.outcome == Outcome::Submitted || a.outcome == Outcome::Rejected) continue;
    // An array's records all carry its token: the first names the submission.
    for (const auto& job : queue)
      if (comment_has_token(job.comment, a.token)) {
        found.emplace_back(a.token, job);
        break;
      }
  }
  if (found.empty()) return 0;
  update_ledger(run, [&](std::vector<Attempt>& attempts) {
    for (const auto& [token, job] : found) {
      Attempt& rec = attempt_by_token(attempts, token);
      if (rec.outcome == Outcome::Submitted) continue;
      rec.reason = fmt::format("{} ({}); its job appeared in {} later, found by its token", outcome_name(rec.outcome),
                               rec.reason, job.source);
      rec.outcome = Outcome::Submitted;
      rec.job_id = submission_id(job);
      rec.decided_at = utc_now_iso();
    }
  });
  return static_cast<int>(found.size());
}

std::vector<std::string> sbatch_args(const Run& run, const RunShape& shape, const std::string& token,
                                     const std::vector<std::string>& extra) {
  // With a snapshot, the job works in the run's view of it (every attempt,
  // every shape of a race: the same one); else in the submit folder.
  std::string workdir = job_workdir(run.dir);
  std::vector<std::string> args = {"--comment=" + job_comment(token, shape.comment),
                                   "--chdir=" + (workdir.empty() ? run.cwd : workdir)};
  args.insert(args.end(), extra.begin(), extra.end());
  args.push_back(run.dir + "/" + shape.script);
  return args;
}

Attempt submit_attempt(Run& run, const RunShape& shape, SlurmClient& slurm, const std::vector<std::string>& extra,
                       const std::string& array, int array_offset, bool race) {
  Attempt a;
  a.token = new_token();
  a.array = array;
  a.race = race;
  a.array_offset = array_offset;
  a.shape = shape.label;
  a.script = shape.script;
  std::vector<std::string> args = sbatch_args(run, shape, a.token, extra);
  if (array_offset || race) args.push_back(std::to_string(array_offset));  // the array script's $1
  if (race) args.push_back("race");  // its $2: a raced grid's first cell runs its race script
  a.argv = {"sbatch", "--parsable"};
  a.argv.insert(a.argv.end(), args.begin(), args.end());
  a.intent_at = utc_now_iso();
  a.pid = getpid();
  a.host = host_name();
  auto record = [&run, &a] { update_ledger(run, [&a](std::vector<Attempt>& all) { attempt_by_token(all, a.token) = a; }); };
  record();  // the intent, before anything can happen

  SbatchResult r = slurm.submit(args);
  a.decided_at = utc_now_iso();
  a.reason = r.reason;
  switch (r.kind) {
    case SbatchResult::Kind::Submitted:
      a.outcome = Outcome::Submitted;
      a.job_id = r.job_id;
      a.cluster = r.cluster;
      break;
    case SbatchResult::Kind::Rejected:
      a.outcome = Outcome::Rejected;
      break;
    case SbatchResult::Kind::Unconfirmed:
      a.outcome = Outcome::Unconfirmed;
      break;
  }
  record();  // the outcome
  if (a.outcome == Outcome::Unconfirmed) {
    // Only a sighting settles it now: a controller that timed out may still be
    // creating the job, so absence is judged later, by the next `submit`.
    Lookup l = find_job_by_token(slurm, a.token, parse_utc_iso(a.intent_at));
    if (l.presence == Presence::Found) {
      a.outcome = Outcome::Submitted;
      a.job_id = submission_id(l.job);
      a.reason = "sbatch's answer was lost (" + a.reason + "); found by its token in " + l.job.source;
      a.decided_at = utc_now_iso();
      record();
    }
  }
  return a;
}

EarlierRuns find_earlier_runs(const std::string& root, const std::string& identity, SlurmClient& slurm) {
  EarlierRuns out;
  std::vector<std::string> ids, arrays;
  std::map<std::string, std::string> run_of;
  std::optional<JobQuery> queue;  // asked once, only when an absent attempt may need it
  for (Run& run : list_runs(root)) {
    if (run.spec_hash != identity) continue;
    auto unsettled = settle_attempts(run, slurm);
    // "Absent" stays revisable: a job that appeared later (another login
    // node's sbatch, a controller slow to record it) is adopted, not doubled.
    bool any_absent = std::any_of(run.attempts.begin(), run.attempts.end(),
                                  [](const Attempt& a) { return a.outcome == Outcome::Absent; });
    if (any_absent) {
      if (!queue) queue = slurm.queue();
      if (queue->answered) adopt_found_jobs(run, queue->jobs);
    }
    if (!unsettled.empty()) {
      const Attempt& a = unsettled.front();
      throw UserError(Location{run.dir + "/ledger.json"}, "",
                      fmt::format("attempt {} (sbatch at {}) may or may not have created a job, and it cannot be "
                                  "checked now: {}. Not submitting again until it is settled; re-run this command "
                                  "when Slurm answers",
                                  a.token, a.intent_at, a.reason));
    }
    bool all_absent = !run.attempts.empty();
    for (const auto& a : run.attempts) {
      if (a.outcome != Outcome::Absent) all_absent = false;
      if (a.outcome == Outcome::Submitted && !a.end) {  // a recorded end is final (jobs.hpp)
        (a.array.empty() ? ids : arrays).push_back(a.job_id);
        run_of[a.job_id] = run.id;
      }
    }
    if (all_absent) out.retry = run;
  }
  // A job array is active while any of its records is: the one whose id is
  // the array's may be a task that ended while others run.
  if (!arrays.empty()) {
    JobQuery q = slurm.jobs(arrays);
    if (!q.answered)
      throw UserError(fmt::format("cannot tell whether job array {} (run {}) of this spec is still queued: {}",
                                  arrays.front(), run_of[arrays.front()], q.error));
    for (const Job& job : q.jobs)
      if (!is_terminal(job.state) && job.state != JobState::Unknown && run_of.count(submission_id(job))) {
        out.active = ActiveJob{run_of[submission_id(job)], submission_id(job)};
        return out;
      }
  }
  if (ids.empty()) return out;
  JobStates states = lookup_jobs(slurm, ids);
  for (const auto& id : ids) {
    const Job& job = states.jobs.at(id);
    if (!is_terminal(job.state) && job.state != JobState::Unknown) {
      out.active = ActiveJob{run_of[id], id};
      return out;
    }
    if (job.state == JobState::Unknown && !states.queue_answered)
      throw UserError(fmt::format("cannot tell whether job {} (run {}) of this spec is still queued: {}", id,
                                  run_of[id], states.error));
  }
  return out;
}

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

IdentityLock::IdentityLock(const std::string& root, const std::string& identity, Context& ctx, Output& out)
    : lock_(std::make_unique<FileLock>(identity_lock_path(root, identity), ctx.clock, [&out](const std::string& holder) {
        out.note(fmt::format("waiting for another ddpctl submitting the same run ({})", holder));
      })) {}

double IdentityLock::waited_s() const { return lock_->waited_s(); }

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
  if (req.preflight) {
    SiteLimits limits;
    std::vector<ShapeLimits> verdicts = preflight_all(run_as, {&shape}, slurm, &limits);
    const Feasibility& f = verdicts.front().feasibility;
    for (const auto& n : unread_limits(limits)) out.note(n);
    if (req.fit_time && f.fit_time_s) {
      for (ResolvedRun* r : {&run_as, &recorded})
        for (auto& s : r->shapes)
          if (s.label == shape.label) set_time_limit(s, *f.fit_time_s);
      result.fitted_time_s = f.fit_time_s;
      out.note(fmt::format("--fit-time: time limit {} instead of {}, so that it ends before reservation {} begins",
                           format_slurm_time(*f.fit_time_s), format_slurm_time(shape.time_s), f.reservation));
      for (const auto& n : f.not_now) out.warning("cannot start now: " + n);
    } else {
      for (const auto& w : limit_warnings(verdicts)) out.warning(w);
      if (req.fit_time)
        out.note(f.later.empty() ? "--fit-time: no reservation is in the way; the time limit stays " +
                                       format_slurm_time(shape.time_s)
                                 : "--fit-time: no shorter time limit starts it now; submitted as it is");
    }
  }
  // The run's folder name is known before its scripts are rendered: they
  // name its checkpoint folder. An earlier attempt retried keeps its own.
  const bool retry = earlier.retry && !req.again;
  std::string id = retry ? earlier.retry->id : new_run_id(resolved.spec.name, utc_now_iso());
  std::string checkpoints = set_checkpoint_folder(run_as, absolute_path(run_as.spec.output_dir + "/" + id));
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
  Attempt a = submit_attempt(run, *run.shape(shape.label), slurm);
  if (a.outcome == Outcome::Rejected)
    throw UserError(Location{run.dir + "/" + a.script}, "", "sbatch rejected the job: " + a.reason);
  if (a.outcome != Outcome::Submitted)
    throw UserError(Location{run.dir + "/ledger.json"}, "",
                    fmt::format("sbatch's answer was unclear ({}); the attempt is recorded as unconfirmed. Run the "
                                "same `ddpctl submit` again: it looks the attempt up in Slurm by its token first and "
                                "submits only if no job was made",
                                a.reason));
  result.run = run;
  result.attempt = a;
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
