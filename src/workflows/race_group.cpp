#include "workflows/race_group.hpp"

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <optional>
#include <set>

#include "explain/failure.hpp"
#include "base/files.hpp"
#include "runs/jobs.hpp"
#include "slurm/site_limits_read.hpp"
#include "script/preflight.hpp"
#include "script/render.hpp"
#include "script/snapshot_record.hpp"
#include "explain/report.hpp"
#include "base/text.hpp"

namespace ddpctl {

namespace fs = std::filesystem;

std::vector<std::string> RaceGroup::labels() const {
  std::vector<std::string> out;
  for (const auto& e : entries) out.push_back(shape(e).label);
  return out;
}

RaceGroup load_race_group(const std::vector<std::string>& specs, const std::vector<std::string>& sets) {
  RaceGroup g;
  std::set<std::string> seen;
  for (const auto& spec : specs) {
    if (auto problem = script_value_problem(spec))
      throw UserError(Location{printable(spec)}, "", "the spec's path " + *problem);
    std::string abs = fs::absolute(spec).lexically_normal().string();
    if (!seen.insert(abs).second)
      throw UserError(Location{spec}, "", "this spec is given twice; a race needs different shapes");
    g.parts.push_back(load_and_resolve(spec, sets));
    if (g.parts.back().spec.has_sweep)
      throw UserError(g.parts.back().spec.where_of("sweep"), "sweep",
                      "a sweep runs every shape (`ddpctl sweep`); a race keeps one: use `alternatives:`");
    g.specs.push_back({spec, read_file(spec)});
  }
  const ResolvedRun& first = g.parts.front();
  for (size_t k = 1; k < g.parts.size(); ++k) {
    const ResolvedRun& p = g.parts[k];
    if (p.profile.name != first.profile.name)
      throw UserError(p.spec.where_of("cluster"), "cluster",
                      fmt::format("a race runs on one cluster (one Slurm to cancel the losers, one filesystem for "
                                  "the claim): {} uses {}, this spec uses {}",
                                  first.spec.file, first.profile.name, p.profile.name));
  }
  // Labels name the claim's files and the status rows: unique across specs.
  std::map<std::string, int> count;
  for (const auto& p : g.parts)
    for (const auto& s : p.shapes) ++count[s.label];
  std::set<std::string> labels, scripts;
  for (size_t k = 0; k < g.parts.size(); ++k) {
    ResolvedRun& p = g.parts[k];
    for (size_t i = 0; i < p.shapes.size(); ++i) {
      ResolvedShape& s = p.shapes[i];
      if (count[s.label] > 1) s.label = p.spec.name + "-" + s.label;
      if (!labels.insert(s.label).second)
        throw UserError(p.spec.where_of("name"), "name",
                        fmt::format("two shapes of the race would both be labelled {}; give the specs different "
                                    "names or the alternatives different labels",
                                    s.label));
      if (!scripts.insert(s.script_name).second) {
        s.script_name = s.job_name + "." + s.label + ".sbatch";
        scripts.insert(s.script_name);
      }
      g.entries.push_back({k, i});
    }
  }
  if (g.entries.size() < 2)
    throw UserError(Location{specs.front()}, "alternatives",
                    "a race needs at least two shapes: give a spec with `alternatives:` or several specs");
  g.identity = run_identity(g.specs, sets, "");
  return g;
}

namespace {

std::vector<RenderedScript> render_group(const RaceGroup& g, const std::string& templates,
                                         const std::string& race_folder) {
  std::vector<RenderedScript> out;
  for (const auto& p : g.parts)
    for (auto& s : render_scripts(p, templates, race_folder)) out.push_back(std::move(s));
  return out;
}

// A shape's own problems as one line (each "file:line: field: message").
std::string joined(const Diagnostics& d) {
  std::vector<std::string> parts;
  for (const auto& item : d.items()) parts.push_back(item.str());
  return join(parts, "; ");
}

// Each shape's predicted run time, from earlier runs of its spec's model and
// data under `runs_root`; `why_not` collects why a spec has none.
void add_run_times(const RaceGroup& g, const std::string& runs_root, std::vector<RankedShape>& shapes,
                   SlurmClient& slurm, std::vector<std::string>& why_not) {
  std::map<std::string, const Prediction*> by_label;
  std::vector<RunTimes> times;
  times.reserve(g.parts.size());
  for (const auto& part : g.parts) {
    std::vector<PlanShape> plan_shapes;
    for (const auto& s : part.shapes) plan_shapes.push_back({s.label, s.nodes, s.ranks_per_node, s.gpus_per_node});
    std::string text = g.specs[&part - g.parts.data()].text;
    times.push_back(predict_run_times(workload_of(text), plan_shapes, spec_epochs(part.spec), runs_root, slurm,
                                      static_cast<long long>(std::time(nullptr))));
    if (!times.back().why_not.empty()) why_not.push_back(times.back().why_not);
    for (const auto& p : times.back().shapes) by_label[p.shape.label] = &p;
  }
  for (auto& r : shapes)
    if (auto it = by_label.find(r.label); it != by_label.end()) {
      r.run_time_s = it->second->time_s;
      r.run_time_from = it->second->efficiency_from;
    }
}

// Preflight (unless skipped) and `sbatch --test-only` of each shape's script
// in `script_dir`; shapes that cannot run are dropped with the reason. By
// finish, each shape's run time is predicted too, and `note` says when that
// could not be done.
std::vector<RankedShape> rank_group(const RaceGroup& g, const RaceRequest& req, const std::string& script_dir,
                                    SlurmClient& slurm, std::string& note) {
  bool preflight_on = req.preflight;
  std::vector<RankedShape> shapes;
  std::optional<SiteLimits> limits;
  if (preflight_on) limits = read_site_limits(slurm);
  for (const auto& e : g.entries) {
    const ResolvedShape& s = g.shape(e);
    RankedShape r;
    r.label = s.label;
    Feasibility f;
    if (preflight_on) {
      Diagnostics d;
      check_program(g.parts[e.part], d);
      check_pyxis(g.parts[e.part], slurm, d);
      Diagnostics shape_checks = preflight(g.parts[e.part], s, slurm, &*limits, &f);
      for (const auto& item : shape_checks.items()) d.add(item);
      if (!d.empty()) {
        r.dropped = true;
        r.why_dropped = "preflight: " + joined(d);
        shapes.push_back(r);
        continue;
      }
    }
    r.estimate = slurm.estimate_start({"--chdir=" + fs::current_path().string(), script_dir + "/" + s.script_name});
    if (r.estimate.kind == StartEstimate::Kind::Impossible) {
      r.dropped = true;
      r.why_dropped = "Slurm says: " + r.estimate.reason;
    }
    // A reservation in the way: the earliest start is its end, whatever
    // --test-only says; usage that holds it now is named beside it.
    if (f.earliest_start && r.estimate.kind == StartEstimate::Kind::Starts)
      r.estimate.start = std::max(r.estimate.start, *f.earliest_start);
    std::vector<std::string> notes = f.not_now;
    if (!f.later.empty()) notes.push_back(f.later);
    r.note = join(notes, "; ");
    shapes.push_back(r);
  }
  if (req.rank_by == "start") return rank_shapes(shapes);
  std::vector<std::string> why_not;
  add_run_times(g, req.runs_root, shapes, slurm, why_not);
  std::vector<RankedShape> ranked = rank_by_finish(shapes, static_cast<long long>(std::time(nullptr)), note);
  if (!note.empty() && !why_not.empty()) note += " (" + join(why_not, "; ") + ")";
  return ranked;
}

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

}  // namespace

std::vector<std::string> ranking_lines(const std::vector<RankedShape>& ranking, long long now, bool by_finish,
                                       const std::string& note) {
  std::vector<std::string> lines = {by_finish && note.empty()
                                        ? "shapes by predicted finish (sbatch --test-only, run times from earlier runs):"
                                        : "shapes by estimated start (sbatch --test-only):"};
  if (!note.empty()) lines.push_back("  " + note);
  for (const auto& line : format_ranking(ranking, now)) lines.push_back("  " + line);
  return lines;
}

std::vector<std::string> kept_labels(const std::vector<RankedShape>& ranking) {
  std::vector<std::string> kept;
  for (const auto& r : ranking)
    if (!r.dropped) kept.push_back(r.label);
  return kept;
}

void throw_if_none_runs(const std::vector<RankedShape>& ranking) {
  if (!kept_labels(ranking).empty()) return;
  std::vector<std::string> why;
  for (const auto& r : ranking) why.push_back(fmt::format("shape {}: {}", r.label, r.why_dropped));
  throw UserError("no shape of the race can run: " + join(why, "; "));
}

std::vector<RankedShape> plan_race(const RaceGroup& g, const RaceRequest& req, SlurmClient& slurm, std::string& note) {
  ScratchDir scratch("ddpctl-plan");
  for (const auto& s : render_group(g, req.templates_dir, ""))
    write_file_atomic(scratch.path() + "/" + s.file_name, s.text, 0755);
  return rank_group(g, req, scratch.path(), slurm, note);
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
  // Without ranking, a shape that fails the preflight stops the whole race:
  // the user named it. With ranking, it is dropped with its reason instead.
  // A shape the site's limits never let start is dropped with its reason
  // (it would only pend), unless every shape is.
  std::vector<std::string> never_starts;
  if (req.preflight && req.rank_by.empty()) {
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
        why_never.push_back(fmt::format("shape {}: {}", g.shape(e).label, joined(shape)));
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
  }
  for (const auto& p : g.parts)
    for (const auto& w : container_warnings(p)) out.warning(w);
  if (req.dry_run) {
    result.kind = RaceSubmission::Kind::DryRun;
    if (!req.rank_by.empty()) result.ranking = plan_race(g, req, slurm, result.ranking_note);
    return result;
  }
  for (const auto& p : g.parts) create_output_dir(p);
  // The code every shape runs, frozen now: re-raced shapes and requeued
  // attempts run these scripts, so the same snapshot.
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
  // One checkpoint folder for every shape: after a requeue, whichever shape
  // wins the race again resumes what the last one saved.
  std::string run_folder = absolute_path(frozen.parts.front().spec.output_dir + "/" + run.id);
  for (auto& p : frozen.parts) create_checkpoint_folder(p, set_checkpoint_folder(p, run_folder));
  for (const auto& s : render_group(frozen, req.templates_dir, race_dir(run)))
    write_file_atomic(run.dir + "/" + s.file_name, s.text, 0755);

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

void wait_for_race(Context& ctx, const Run& given, bool follow, Output& out) {
  Run run = given;
  long long submitted = parse_utc_iso(run.created_at);
  for (;;) {
    RaceState race = read_race(run);
    if (race.winner()) {
      size_t generation = race.generations.size();
      if (generation > 1)
        out.line(fmt::format("race: generation {} won by shape {} (job {}) {:.1f} s after the re-race",
                             generation, race.winner()->label, race.winner()->job_id,
                             race.winner()->at - race.generations.back().opened_at));
      else
        out.line(fmt::format("race: won by shape {} (job {}) {:.1f} s after submission", race.winner()->label,
                             race.winner()->job_id, race.winner()->at - static_cast<double>(submitted)));
      for (const auto& [label, id] : race.job_of_label())
        if (id != race.winner()->job_id) out.line(fmt::format("race: shape {} (job {}) stands down", label, id));
      if (!follow) return;
      const Attempt* winner = nullptr;
      for (const auto& a : run.attempts)
        if (a.job_id == race.winner()->job_id) winner = &a;
      if (!winner) return;
      try {
        return wait_for_job(ctx, run, *winner, true, out);
      } catch (const UserError&) {
        // Cancelled by the winner of a re-race: follow that one instead.
        run = load_run(run.dir);
        RaceState now = read_race(run);
        if (now.generations.size() == generation) throw;
        out.line(fmt::format("race: job {} was requeued; generation {}: {}", race.winner()->job_id,
                             now.generations.size(), now.generations.back().why));
        continue;
      }
    }
    std::vector<std::string> ids;
    for (const auto& [label, id] : race.job_of_label()) ids.push_back(id);
    JobStates states = lookup_jobs(ctx.slurm, ids);
    // A job can end right after claiming; read the claim once more before giving up.
    if (race_outcome(race, states) == RaceOutcome::Failed && race_outcome(read_race(run), states) == RaceOutcome::Failed) {
      // How each shape's job ended: they failed before their training began.
      std::vector<std::string> ends;
      for (const auto& [label, id] : race.job_of_label()) {
        const Job& job = states.jobs.at(id);
        std::string how = describe_exit(job.exit);
        if (const RunShape* shape = run.shape(label))
          if (auto f = explain_failure(*shape, job, ctx.slurm)) how = describe_failure(*f);
        ends.push_back(fmt::format("shape {} (job {}) ended {}{}", label, id, state_name(job.state),
                                   how.empty() ? "" : ": " + how));
      }
      throw UserError(fmt::format("race failed: every shape's job ended before claiming the group: {}; see `ddpctl "
                                  "status {}`",
                                  join(ends, "; "), run.id));
    }
    ctx.clock.sleep(ctx.poll_s);
  }
}

RaceRequest race_of_submit(const SubmitRequest& req) {
  if (req.fit_time)
    throw UserError(Location{"--fit-time"}, "", "fits one shape's time limit; this spec submits a race (pick one shape with --shape)");
  RaceRequest race;
  race.specs = {req.spec};
  race.sets = req.sets;
  race.runs_root = req.runs_root;
  race.templates_dir = req.templates_dir;
  race.dry_run = req.dry_run;
  race.preflight = req.preflight;
  race.again = req.again;
  race.snapshot = req.snapshot;
  race.snapshot_from = req.snapshot_from;
  race.rank_by = req.rank_by;
  return race;
}

namespace {

void print_plan(const std::vector<RankedShape>& ranking, bool by_finish, const std::string& note, long long now,
                Output& out) {
  for (const auto& line : ranking_lines(ranking, now, by_finish, note)) out.line(line);
  throw_if_none_runs(ranking);
  out.line(fmt::format("a race would submit {}; nothing was submitted", join(kept_labels(ranking), ", ")));
}

}  // namespace

double race_command(const RaceRequest& req, bool plan, bool wait, bool follow, Context& ctx, Output& out, Output& side) {
  RaceGroup group = load_race_group(req.specs, req.sets);
  if (plan) {
    std::string note;
    std::vector<RankedShape> ranking = plan_race(group, req, ctx.slurm, note);
    print_plan(ranking, req.rank_by != "start", note, ctx.clock.now(), out);
    return 0;
  }
  if (!req.dry_run) try {
      race_again_in(req.runs_root, {}, ctx.clock.now(), ctx, side);
    } catch (const UserError& e) {
      side.warning(std::string("a requeued race winner could not be re-raced: ") + e.what());
    }
  RaceSubmission r = submit_race(group, req, ctx, out);
  switch (r.kind) {
    case RaceSubmission::Kind::AlreadySubmitted:
      out.line(fmt::format("already submitted: job {} of race run {} is still queued or running; not submitting it "
                           "again (--again submits another)",
                           r.active.job_id, r.active.run_id));
      return r.lock_waited_s;
    case RaceSubmission::Kind::DryRun:
      out.line(fmt::format("dry run: {} passed validation{}; nothing was submitted", join(req.specs, ", "),
                           !req.preflight || !req.rank_by.empty() ? "" : " and the cluster preflight"));
      if (!req.rank_by.empty()) print_plan(r.ranking, req.rank_by == "finish", r.ranking_note, ctx.clock.now(), out);
      else out.line(fmt::format("would race shapes {}: each submitted with sbatch; the first to start trains",
                                join(group.labels(), ", ")));
      return r.lock_waited_s;
    case RaceSubmission::Kind::Submitted:
      break;
  }
  out.line(fmt::format("submitted race of {} as run {}: the first to start trains, the others are cancelled",
                       join(r.submitted, ", "), r.run.id));
  out.line(fmt::format("  status: ddpctl status {}\n  logs:   ddpctl logs {}", r.run.id, r.run.id));
  if (wait || follow) wait_for_race(ctx, r.run, follow, out);
  return r.lock_waited_s;
}

}  // namespace ddpctl
