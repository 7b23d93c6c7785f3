// ddpctl submit SPEC: validate, preflight, record, sbatch, record.
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fmt/format.h>
#include <iostream>
#include <memory>
#include <thread>

#include "app.hpp"
#include "common.hpp"
#include "files.hpp"
#include "jobs.hpp"
#include "race_cli.hpp"
#include "render.hpp"
#include "submit.hpp"
#include "submitting.hpp"
#include "text.hpp"

namespace ddpctl::cli {

namespace {

struct SubmitOptions {
  std::string spec;
  std::vector<std::string> sets;
  std::string shape, runs, templates;
  bool wait = false, follow = false, dry_run = false, no_preflight = false, again = false;
  bool rank_by_estimate = false;
};

size_t choose_shape(const ResolvedRun& run, const std::string& label) {
  std::vector<std::string> labels;
  for (const auto& s : run.shapes) labels.push_back(s.label);
  if (label.empty()) {
    if (run.shapes.size() > 1)
      throw UserError(Location{run.spec.file}, "alternatives",
                      fmt::format("this spec has {} shapes ({}); choose one with --shape", labels.size(),
                                  join(labels, ", ")));
    return 0;
  }
  for (size_t i = 0; i < run.shapes.size(); ++i)
    if (run.shapes[i].label == label) return i;
  throw UserError(Location{"--shape"}, "", fmt::format("no shape labelled {}{}; shapes: {}", printable(label),
                                                      did_you_mean(label, labels), join(labels, ", ")));
}

}  // namespace

std::string clock_time(long long t) {
  char buf[32];
  std::time_t tt = static_cast<std::time_t>(t);
  std::strftime(buf, sizeof buf, "%H:%M:%S", std::localtime(&tt));
  return buf;
}

EarlierRuns earlier_runs(const std::string& root, const std::string& hash, SlurmClient& slurm) {
  EarlierRuns out;
  std::vector<std::string> ids;
  std::map<std::string, std::string> run_of;
  for (Run& run : list_runs(root)) {
    if (run.spec_hash != hash) continue;
    auto unsettled = settle_attempts(run, slurm);
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
      if (a.outcome != "absent") all_absent = false;
      if (a.outcome == "submitted") {
        ids.push_back(a.job_id);
        run_of[a.job_id] = run.id;
      }
    }
    if (all_absent) out.retry = run;
  }
  if (ids.empty()) return out;
  JobStates states = lookup_jobs(slurm, ids);
  for (const auto& id : ids) {
    const Job& job = states.jobs.at(id);
    if (!is_terminal_state(job.state) && job.state != "UNKNOWN") {
      out.active = std::make_pair(run_of[id], id);
      return out;
    }
    if (job.state == "UNKNOWN" && !states.queue_answered)
      throw UserError(fmt::format("cannot tell whether job {} (run {}) of this spec is still queued: {}", id,
                                  run_of[id], states.error));
  }
  return out;
}

void wait_for_job(SlurmClient& slurm, const Run& run, const Attempt& attempt, bool follow) {
  std::string last;
  EndWatcher end;
  const RunShape* shape = run.shape(attempt.shape);
  std::string progress_file =
      shape ? progress_path(shape->output_dir, shape->job_name, attempt.job_id) : std::string();
  for (;;) {
    JobStates states = lookup_jobs(slurm, {attempt.job_id});
    const Job& job = states.jobs.at(attempt.job_id);
    std::string line;
    if (job.state == "PENDING") {
      line = "PENDING";
      if (auto why = explain_reason(job.reason); !why.empty()) line += " (" + why + ")";
      if (job.start_time > std::time(nullptr)) line += ", estimated start " + clock_time(job.start_time);
    } else if (job.state == "RUNNING") {
      line = "RUNNING on " + job.nodes;
      if (follow)
        if (auto p = read_progress(progress_file)) line += "  " + format_progress(*p);
    } else {
      line = job.state;
      if (auto why = explain_reason(job.reason); !why.empty()) line += " (" + why + ")";
    }
    if (line != last) {
      std::cout << fmt::format("job {}: {}", attempt.job_id, paint(line, state_color(job.state))) << std::endl;
      last = line;
    }
    if (job.state == "UNKNOWN" && states.queue_answered)
      throw UserError(fmt::format("job {} left the queue and its end cannot be read ({})", attempt.job_id,
                                  job.reason));
    if (end.ended(job)) {
      if (job.state == "COMPLETED") return;
      throw UserError(fmt::format("job {} ended {}{}; see `ddpctl logs {}`", attempt.job_id, job.state,
                                  job.exit_code.empty() ? "" : " (exit " + job.exit_code + ")", run.id));
    }
    bool started = job.state != "PENDING" && job.state != "UNKNOWN" && job.state != "CONFIGURING";
    if (!follow && started && !is_terminal_state(job.state)) return;
    std::this_thread::sleep_for(std::chrono::duration<double>(poll_interval_s()));
  }
}

void create_output_dir(const ResolvedRun& resolved) {
  std::error_code ec;
  std::filesystem::create_directories(resolved.spec.output_dir, ec);
  if (ec)
    throw UserError(resolved.spec.where_of("output_dir"), "output_dir",
                    "cannot create " + resolved.spec.output_dir + ": " + ec.message());
}

namespace {

void print_dry_run(const SubmitOptions& o) {
  std::cout << fmt::format("dry run: {} passed validation{}; nothing was submitted\n", o.spec,
                           o.no_preflight ? "" : " and the cluster preflight");
}

void run_submit(const SubmitOptions& o) {
  if (auto problem = script_value_problem(o.spec))
    throw UserError(Location{printable(o.spec)}, "", "the spec's path " + *problem);
  ResolvedRun resolved = load_and_resolve(o.spec, o.sets);
  if (resolved.spec.has_sweep && o.shape.empty())
    throw UserError(resolved.spec.where_of("sweep"), "sweep",
                    "this spec is a sweep: `ddpctl sweep` submits one run per shape, `--shape LABEL` one of them");
  if (resolved.shapes.size() > 1 && o.shape.empty()) {
    RaceOptions race;
    race.specs = {o.spec};
    race.sets = o.sets;
    race.runs = o.runs;
    race.templates = o.templates;
    race.wait = o.wait;
    race.follow = o.follow;
    race.dry_run = o.dry_run;
    race.no_preflight = o.no_preflight;
    race.again = o.again;
    race.rank_by_estimate = o.rank_by_estimate;
    return run_race(race);
  }
  if (o.rank_by_estimate)
    throw UserError(Location{"--rank-by-estimate"}, "",
                    "ranks the shapes of a race, and this submission has one shape; `ddpctl race --plan` shows "
                    "when shapes would start");
  size_t index = choose_shape(resolved, o.shape);
  std::vector<RenderedScript> rendered = render_scripts(resolved, templates_dir(o.templates));
  std::string spec_text = read_file(o.spec);
  std::vector<std::string> identity = o.sets;
  identity.push_back("--shape=" + resolved.shapes[index].label);
  std::string hash = spec_hash(o.spec, spec_text, identity);
  std::string root = runs_root(o.runs);

  SystemCommandRunner runner;
  SlurmClient slurm(runner);
  EarlierRuns earlier;
  if (!o.dry_run) {
    earlier = earlier_runs(root, hash, slurm);
    if (earlier.active && !o.again) {
      std::cout << fmt::format(
          "already submitted: job {} of run {} is still queued or running; not submitting it again "
          "(--again submits another)\n",
          earlier.active->second, earlier.active->first);
      return;
    }
  }
  if (!o.no_preflight) preflight(resolved, index, slurm).throw_if_any();

  const ResolvedShape& shape = resolved.shapes[index];
  if (o.dry_run) {
    print_dry_run(o);
    std::cout << fmt::format("would run: sbatch --parsable --comment=ddpctl:<token> --chdir={} <run dir>/{}\n",
                             std::filesystem::current_path().string(), shape.script_name);
    return;
  }

  create_output_dir(resolved);
  std::vector<std::pair<std::string, std::string>> scripts;
  for (const auto& s : rendered) scripts.emplace_back(s.file_name, s.text);
  // An earlier attempt of this spec that made no job is retried in its own run,
  // so the ledger tells the whole story.
  Run run;
  if (earlier.retry && !o.again) {
    run = *earlier.retry;
    for (const auto& [file, text] : scripts) write_file_atomic(run.dir + "/" + file, text, 0755);
  } else {
    run = create_run(root, resolved, spec_text, o.sets, hash, scripts);
  }
  Attempt a = submit_attempt(run, *run.shape(shape.label), slurm);
  if (a.outcome == "rejected")
    throw UserError(Location{run.dir + "/" + a.script}, "", "sbatch rejected the job: " + a.reason);
  if (a.outcome != "submitted")
    throw UserError(Location{run.dir + "/ledger.json"}, "",
                    fmt::format("sbatch's answer was unclear ({}); the attempt is recorded as unconfirmed. Run the "
                                "same `ddpctl submit` again: it looks the attempt up in Slurm by its token first and "
                                "submits only if no job was made",
                                a.reason));
  std::cout << fmt::format("submitted job {}{} (shape {}) as run {}\n", a.job_id,
                           a.cluster.empty() ? "" : " on cluster " + a.cluster, a.shape, run.id);
  std::cout << fmt::format("  status: ddpctl status {}\n  logs:   ddpctl logs {}\n", run.id, run.id);
  if (o.wait || o.follow) wait_for_job(slurm, run, a, o.follow);
}

}  // namespace

void setup_submit(CLI::App& app) {
  auto opts = std::make_shared<SubmitOptions>();
  CLI::App* cmd = app.add_subcommand("submit", "Validate a run spec, check it against the cluster, and submit it");
  cmd->add_option("spec", opts->spec, "Run spec (YAML)")->required();
  cmd->add_option("--set", opts->sets, "Override a spec field: KEY=VALUE with a dotted KEY");
  cmd->add_option("--shape", opts->shape, "Submit the shape with this label (specs with alternatives)");
  cmd->add_option("--runs", opts->runs, "Folder of run records (default: $DDPCTL_RUNS or ./runs)");
  cmd->add_option("--templates", opts->templates, "Folder with sbatch.sh.mustache");
  cmd->add_flag("--wait", opts->wait, "Show progress until the job starts");
  cmd->add_flag("--follow", opts->follow, "Show progress until the job ends (implies --wait)");
  cmd->add_flag("--dry-run", opts->dry_run, "Validate and preflight only; submit nothing");
  cmd->add_flag("--no-preflight", opts->no_preflight, "Skip the checks against sinfo and sacctmgr");
  cmd->add_flag("--again", opts->again, "Submit even if a job of this same spec is still queued or running");
  cmd->add_flag("--rank-by-estimate", opts->rank_by_estimate,
                "Race: ask sbatch --test-only first, drop shapes that cannot run, submit the rest earliest first");
  cmd->callback([opts] { run_submit(*opts); });
}

}  // namespace ddpctl::cli
