#include "race/race_submit.hpp"

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fmt/format.h>
#include <optional>
#include <set>

#include "base/files.hpp"
#include "base/text.hpp"
#include "runs/race_gate_files.hpp"
#include "script/preflight.hpp"
#include "runs/snapshot_record.hpp"
#include "script/snapshot_workdir.hpp"
#include "slurm/site_limits_read.hpp"
#include "race/race_rank.hpp"
#include "script/run_create.hpp"

namespace ddpctl {

namespace {

// Shapes of one spec share the world size; separate specs need not.
void note_world_sizes(const RaceGroup& g, const std::vector<std::string>& labels, Output& out) {
  std::set<int> sizes;
  std::vector<std::string> shown;
  for (const auto& e : g.entries) {
    const ResolvedShape& s = g.shape(e);
    if (std::find(labels.begin(), labels.end(), s.label) == labels.end()) continue;
    sizes.insert(s.world_size());
    shown.push_back(fmt::format("{} {}", s.label, s.world_size()));
  }
  if (sizes.size() > 1)
    out.note(fmt::format("the shapes' world sizes differ ({}): the global batch depends on the winner unless "
                         "trainer.global_batch keeps it; the bundled trainer's checkpoint resumes on any world size",
                         join(shown, ", ")));
}

// The run's record, its race folder and every shape's script, of the code
// frozen now: re-raced shapes and requeued attempts run these scripts, so
// the same snapshot.
Run record_race_run(const RaceGroup& g, const RaceRequest& req, Context& ctx) {
  for (const auto& p : g.parts) create_output_dir(p);
  RaceGroup frozen = g;
  std::vector<SnapshotDecision> snaps;
  std::string cwd = std::filesystem::current_path().string();
  for (auto& p : frozen.parts) {
    snaps.push_back(take_snapshot(p.spec, cwd, req.runs_root, !req.snapshot, ctx.runner, req.snapshot_from));
    apply_snapshot(p, snaps.back(), cwd);
  }
  std::vector<RunPart> parts;
  for (size_t k = 0; k < frozen.parts.size(); ++k) parts.push_back({&frozen.parts[k], frozen.specs[k].text});
  Run run = create_run(req.runs_root, parts, req.sets, g.identity, {});
  record_snapshot(run.dir, snaps.front());
  init_race(run);
  if (g.across.on()) init_gate(run, g.across.coordinator, g.across.site, g.across.gate_s);
  // One checkpoint folder for every shape: after a requeue, whichever shape
  // wins the race again resumes what the last one saved.
  std::string run_folder = absolute_path(frozen.parts.front().spec.output_dir + "/" + run.id);
  for (auto& p : frozen.parts) create_checkpoint_folder(p, set_checkpoint_folder(p, run_folder));
  for (auto& p : frozen.parts) set_run_dir(p, run.dir);
  for (const auto& s : render_group(frozen, req.templates_dir, race_dir(run)))
    write_file_atomic(run.dir + "/" + s.file_name, s.text, 0755);
  return run;
}

}  // namespace

std::vector<std::string> preflight_race(const RaceGroup& g, SlurmClient& slurm, Output& out) {
  std::vector<std::string> never_starts;
  Diagnostics all;
  for (const auto& p : g.parts) {
    check_program(p, all);
    check_pyxis(p, slurm, all);
  }
  SiteLimits limits = read_site_limits(slurm);
  std::vector<ShapeLimits> verdicts;
  std::vector<std::string> why_never;
  for (const auto& e : g.entries) {
    Feasibility f;
    Diagnostics shape = preflight(g.parts[e.part], g.shape(e), slurm, &limits, &f);  // a named value: items() refers into it
    if (f.kind == Feasibility::Kind::Never && shape.size() == f.never.size()) {
      never_starts.push_back(g.shape(e).label);
      why_never.push_back(fmt::format("shape {}: {}", g.shape(e).label, diagnostics_line(shape)));
      continue;
    }
    for (const auto& d : shape.items()) all.add(d);
    verdicts.push_back({g.shape(e).label, f});
  }
  all.throw_if_any();
  if (never_starts.size() == g.entries.size())
    throw UserError("no shape of the race can ever start here: " + join(why_never, "; "));
  for (const auto& w : why_never) out.warning("dropped from the race, it would never start: " + w);
  for (const auto& w : limit_warnings(verdicts)) out.warning(w);
  for (const auto& n : unread_limits(limits)) out.note(n);
  return never_starts;
}

RaceSubmission submit_race(const RaceGroup& g, const RaceRequest& req, Context& ctx, Output& out) {
  SlurmClient& slurm = ctx.slurm;
  RaceSubmission result;
  std::optional<IdentityLock> lock;  // one group per identity, whoever submits it
  if (!req.dry_run) {
    lock.emplace(req.runs_root, g.identity, ctx, out);
    result.lock_waited_s = lock->waited_s();
    EarlierRuns earlier = find_earlier_runs(req.runs_root, g.identity, slurm);
    if (earlier.active && !req.again) {
      result.kind = RaceSubmission::Kind::AlreadySubmitted;
      result.active = *earlier.active;
      return result;
    }
  }
  // Without ranking, a shape that fails the preflight stops the whole race;
  // with ranking, it is dropped with its reason instead (rank_group).
  std::vector<std::string> never_starts;
  if (req.preflight && req.rank_by.empty()) never_starts = preflight_race(g, slurm, out);
  for (const auto& p : g.parts)
    for (const auto& w : container_warnings(p)) out.warning(w);
  if (req.dry_run) {
    result.kind = RaceSubmission::Kind::DryRun;
    if (!req.rank_by.empty()) result.ranking = plan_race(g, req, slurm, result.ranking_note);
    return result;
  }
  Run run = record_race_run(g, req, ctx);

  std::vector<std::string> order;
  for (const auto& label : g.labels())
    if (std::find(never_starts.begin(), never_starts.end(), label) == never_starts.end()) order.push_back(label);
  if (!req.rank_by.empty()) {
    result.ranking = rank_group(g, req, run.dir, slurm, result.ranking_note);
    record_ranking(run, result.ranking);
    for (const auto& line : ranking_lines(result.ranking, static_cast<long long>(std::time(nullptr)),
                                          req.rank_by == "finish", result.ranking_note))
      out.line(line);
    throw_if_none_runs(result.ranking);
    order = kept_labels(result.ranking);
  }
  note_world_sizes(g, order, out);
  result.submitted = submit_race_shapes(run, order, 1, slurm, out);
  if (result.submitted.empty())
    throw UserError(Location{run.dir + "/ledger.json"}, "", "no shape of the race could be submitted");
  result.run = run;
  return result;
}

std::vector<std::string> sbatch_leave_out(const std::string& script, const std::vector<std::string>& nodes,
                                          std::vector<std::string>* kept) {
  std::vector<std::string> excluded, required;
  for (const auto& raw : split(script, '\n')) {
    std::string line = trim(raw);
    if (line.rfind("#SBATCH ", 0) != 0) continue;
    std::string option = trim(line.substr(8));
    // ddpctl renders every directive as --name=value.
    for (auto [name, into] : {std::pair{"--exclude=", &excluded}, std::pair{"--nodelist=", &required}})
      if (option.rfind(name, 0) == 0) *into = expand_hostlist(option.substr(std::string(name).size()));
  }
  auto has = [](const std::vector<std::string>& list, const std::string& n) {
    return std::find(list.begin(), list.end(), n) != list.end();
  };
  std::vector<std::string> rest, kept_here;
  for (const auto& n : required)
    if (!has(nodes, n)) rest.push_back(n);
  bool drop_required = !rest.empty() && rest.size() < required.size();
  for (const auto& n : nodes) {
    if (has(required, n) && !drop_required) {
      kept_here.push_back(n);
      continue;
    }
    if (!has(excluded, n)) excluded.push_back(n);
  }
  if (kept) *kept = kept_here;
  std::vector<std::string> args;
  if (!excluded.empty()) args.push_back("--exclude=" + join(excluded, ","));
  if (drop_required) args.push_back("--nodelist=" + join(rest, ","));
  return args;
}

std::vector<std::string> submit_race_shapes(Run& run, const std::vector<std::string>& order, int generation,
                                            SlurmClient& slurm, Output& out, const std::string& array,
                                            const std::vector<std::string>& leave_out) {
  std::vector<std::string> submitted;
  for (const auto& label : order) {
    const RunShape& shape = *run.shape(label);
    RaceState before = read_race(run);
    if (before.generations.size() != static_cast<size_t>(generation) || before.claimed()) {
      out.line(fmt::format("shape {}: not submitted; the group was already won{}", shape.label,
                           before.winner() ? " by job " + before.winner()->job_id : ""));
      continue;
    }
    std::vector<std::string> extra;
    if (!array.empty()) extra.push_back("--array=" + array);
    if (!leave_out.empty()) {
      std::string path = run.dir + "/" + shape.script;
      std::vector<std::string> kept;
      try {
        for (auto& arg : sbatch_leave_out(read_file(path), leave_out, &kept)) extra.push_back(std::move(arg));
      } catch (const std::exception& e) {
        throw UserError(Location{path}, "", fmt::format("cannot read the script of shape {}: {}", label, e.what()));
      }
      if (!kept.empty())
        out.warning(fmt::format("shape {} asks for {} by name (nodelist:) and nothing else: not left out",
                                shape.label, join(kept, ", ")));
    }
    Attempt a = array.empty() ? submit_attempt(run, shape, slurm, extra)
                              : submit_attempt(run, shape, slurm, extra, array, 0, true);
    if (a.outcome == Outcome::Rejected) {
      out.error(fmt::format("shape {}: sbatch rejected the job: {}", shape.label, a.reason));
      continue;
    }
    if (a.outcome != Outcome::Submitted) {
      out.warning(fmt::format("shape {}: sbatch's answer was unclear ({}); recorded as unconfirmed in {}/ledger.json",
                              shape.label, a.reason, run.dir));
      continue;
    }
    // Record the id first, then look at the claim: a winner that claimed before
    // the id was there cannot have cancelled this job, so cancel it here.
    record_race_job(run, shape.label, a.job_id, generation);
    submitted.push_back(fmt::format("job {} (shape {})", a.job_id, shape.label));
    RaceState after = read_race(run);
    if (after.generations.size() != static_cast<size_t>(generation) ||
        (after.claimed() && (!after.winner() || after.winner()->job_id != a.job_id))) {
      slurm.cancel({a.job_id});
      out.line(fmt::format("shape {}: job {} cancelled at once; the group was already won", shape.label, a.job_id));
    }
  }
  return submitted;
}

}  // namespace ddpctl
