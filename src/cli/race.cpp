// Hybrid mode (docs/race.md): `ddpctl race SPEC...` and `ddpctl submit SPEC`
// of a spec with alternatives submit every shape as one race group; the first
// job to start claims the group and cancels the rest. --rank-by-estimate and
// --plan ask `sbatch --test-only` when each shape would start.
#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fmt/format.h>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <thread>

#include "app.hpp"
#include "common.hpp"
#include "files.hpp"
#include "jobs.hpp"
#include "race.hpp"
#include "race_cli.hpp"
#include "render.hpp"
#include "submit.hpp"
#include "submitting.hpp"
#include "text.hpp"

namespace ddpctl::cli {

namespace fs = std::filesystem;

namespace {

// Every spec of the race, resolved, with the shapes' labels made unique
// across specs. entries[i] is the i-th shape of the group.
struct RaceGroup {
  std::vector<ResolvedRun> parts;
  std::vector<std::string> texts;
  struct Entry {
    size_t part, shape;
  };
  std::vector<Entry> entries;
  std::string hash;

  const ResolvedShape& shape(const Entry& e) const { return parts[e.part].shapes[e.shape]; }
  std::vector<std::string> labels() const {
    std::vector<std::string> out;
    for (const auto& e : entries) out.push_back(shape(e).label);
    return out;
  }
};

RaceGroup load_group(const RaceOptions& o) {
  RaceGroup g;
  std::set<std::string> seen;
  for (const auto& spec : o.specs) {
    if (auto problem = script_value_problem(spec))
      throw UserError(Location{printable(spec)}, "", "the spec's path " + *problem);
    std::string abs = fs::absolute(spec).lexically_normal().string();
    if (!seen.insert(abs).second)
      throw UserError(Location{spec}, "", "this spec is given twice; a race needs different shapes");
    g.parts.push_back(load_and_resolve(spec, o.sets));
    if (g.parts.back().spec.has_sweep)
      throw UserError(g.parts.back().spec.where_of("sweep"), "sweep",
                      "a sweep runs every shape (`ddpctl sweep`); a race keeps one: use `alternatives:`");
    g.texts.push_back(read_file(spec));
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
    throw UserError(Location{o.specs.front()}, "alternatives",
                    "a race needs at least two shapes: give a spec with `alternatives:` or several specs");
  // The identity of this race: every spec, its text, and the overrides.
  std::vector<std::string> identity = o.sets;
  identity.push_back("--race");
  for (size_t k = 1; k < g.parts.size(); ++k)
    identity.push_back(fs::absolute(o.specs[k]).string() + '\n' + g.texts[k]);
  g.hash = spec_hash(o.specs.front(), g.texts.front(), identity);
  return g;
}

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

// Preflight (unless skipped) and `sbatch --test-only` of each shape's script
// in `script_dir`; shapes that cannot run are dropped with the reason.
std::vector<RankedShape> rank_group(const RaceGroup& g, const std::string& script_dir, bool preflight_on,
                                    SlurmClient& slurm) {
  std::vector<RankedShape> shapes;
  for (const auto& e : g.entries) {
    const ResolvedShape& s = g.shape(e);
    RankedShape r;
    r.label = s.label;
    if (preflight_on) {
      Diagnostics d = preflight(g.parts[e.part], e.shape, slurm);
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
    shapes.push_back(r);
  }
  return rank_shapes(shapes);
}

void print_ranking(const std::vector<RankedShape>& ranking) {
  std::cout << "shapes by estimated start (sbatch --test-only):\n";
  for (const auto& line : format_ranking(ranking, std::time(nullptr))) std::cout << "  " << line << '\n';
}

void throw_if_none_runs(const std::vector<RankedShape>& ranking) {
  for (const auto& r : ranking)
    if (!r.dropped) return;
  std::vector<std::string> why;
  for (const auto& r : ranking) why.push_back(fmt::format("shape {}: {}", r.label, r.why_dropped));
  throw UserError("no shape of the race can run: " + join(why, "; "));
}

// --plan: the ranking, from scripts rendered into a scratch folder; nothing is
// submitted and no run is recorded.
void plan(const RaceGroup& g, const RaceOptions& o, SlurmClient& slurm) {
  ScratchDir scratch("ddpctl-plan");
  for (const auto& s : render_group(g, templates_dir(o.templates), ""))
    write_file_atomic(scratch.path() + "/" + s.file_name, s.text, 0755);
  auto ranking = rank_group(g, scratch.path(), !o.no_preflight, slurm);
  print_ranking(ranking);
  for (const auto& r : ranking)
    if (!r.dropped) {
      std::cout << fmt::format("a race would submit {}; nothing was submitted\n", [&] {
        std::vector<std::string> kept;
        for (const auto& k : ranking)
          if (!k.dropped) kept.push_back(k.label);
        return join(kept, ", ");
      }());
      return;
    }
  throw_if_none_runs(ranking);
}

// Waits until the race group has a winner (printing who won, after how long,
// and what was cancelled); with `follow`, then follows the winner to its end.
void wait_for_race(SlurmClient& slurm, Run& run, bool follow) {
  long long submitted = parse_utc_iso(run.created_at);
  for (;;) {
    RaceState race = read_race(run);
    if (race.winner) {
      std::cout << fmt::format("race: won by shape {} (job {}) {:.1f} s after submission\n", race.winner->label,
                               race.winner->job_id, race.winner->at - static_cast<double>(submitted));
      for (const auto& [label, id] : race.job_of_label)
        if (id != race.winner->job_id) std::cout << fmt::format("race: shape {} (job {}) stands down\n", label, id);
      if (!follow) return;
      for (const auto& a : run.attempts)
        if (a.job_id == race.winner->job_id) return wait_for_job(slurm, run, a, true);
      return;
    }
    std::vector<std::string> ids;
    for (const auto& [label, id] : race.job_of_label) ids.push_back(id);
    JobStates states = lookup_jobs(slurm, ids);
    bool all_ended = !ids.empty() && states.queue_answered;
    for (const auto& id : ids) all_ended = all_ended && is_terminal_state(states.jobs.at(id).state);
    // A job can end right after claiming; read the claim once more before giving up.
    if (all_ended && !read_race(run).claimed)
      throw UserError(fmt::format("race failed: every shape's job ended before claiming the group; see `ddpctl "
                                  "status {}`",
                                  run.id));
    std::this_thread::sleep_for(std::chrono::duration<double>(poll_interval_s()));
  }
}

// Submits the shapes in `order` (labels); each job id is recorded before the
// claim is looked at, so a winner can always cancel it or ddpctl does.
std::vector<std::string> submit_shapes(Run& run, const std::vector<std::string>& order, SlurmClient& slurm) {
  std::vector<std::string> submitted;
  for (const auto& label : order) {
    const RunShape& shape = *run.shape(label);
    RaceState before = read_race(run);
    if (before.claimed) {
      std::cout << fmt::format("shape {}: not submitted; the group was already won{}\n", shape.label,
                               before.winner ? " by job " + before.winner->job_id : "");
      continue;
    }
    Attempt a = submit_attempt(run, shape, slurm);
    if (a.outcome == "rejected") {
      std::cerr << fmt::format("ddpctl: error: shape {}: sbatch rejected the job: {}\n", shape.label, a.reason);
      continue;
    }
    if (a.outcome != "submitted") {
      std::cerr << fmt::format("ddpctl: warning: shape {}: sbatch's answer was unclear ({}); recorded as unconfirmed "
                               "in {}/ledger.json\n",
                               shape.label, a.reason, run.dir);
      continue;
    }
    // Record the id first, then look at the claim: a winner that claimed before
    // the id was there cannot have cancelled this job, so cancel it here.
    record_race_job(run, shape.label, a.job_id);
    submitted.push_back(fmt::format("job {} (shape {})", a.job_id, shape.label));
    RaceState after = read_race(run);
    if (after.claimed && (!after.winner || after.winner->job_id != a.job_id)) {
      slurm.cancel({a.job_id});
      std::cout << fmt::format("shape {}: job {} cancelled at once; the group was already won\n", shape.label,
                               a.job_id);
    }
  }
  return submitted;
}

// Shapes of one spec share the world size; separate specs need not.
void note_world_sizes(const RaceGroup& g, const std::vector<std::string>& labels) {
  std::set<int> sizes;
  std::vector<std::string> shown;
  for (const auto& e : g.entries) {
    const ResolvedShape& s = g.shape(e);
    if (std::find(labels.begin(), labels.end(), s.label) == labels.end()) continue;
    sizes.insert(s.world_size());
    shown.push_back(fmt::format("{} {}", s.label, s.world_size()));
  }
  if (sizes.size() > 1)
    std::cerr << fmt::format("ddpctl: note: the shapes' world sizes differ ({}): the global batch depends on the "
                             "winner, and a checkpoint resumes only on the same world size\n",
                             join(shown, ", "));
}

}  // namespace

void run_race(const RaceOptions& o) {
  RaceGroup g = load_group(o);
  std::string root = runs_root(o.runs);
  SystemCommandRunner runner;
  SlurmClient slurm(runner);
  if (o.plan) return plan(g, o, slurm);

  if (!o.dry_run) {
    EarlierRuns earlier = earlier_runs(root, g.hash, slurm);
    if (earlier.active && !o.again) {
      std::cout << fmt::format(
          "already submitted: job {} of race run {} is still queued or running; not submitting it again "
          "(--again submits another)\n",
          earlier.active->second, earlier.active->first);
      return;
    }
  }
  // Without ranking, a shape that fails the preflight stops the whole race:
  // the user named it. With ranking, it is dropped with its reason instead.
  if (!o.no_preflight && !o.rank_by_estimate) {
    Diagnostics all;
    for (const auto& e : g.entries) {
      Diagnostics shape = preflight(g.parts[e.part], e.shape, slurm);  // a named value: items() refers into it
      for (const auto& d : shape.items()) all.add(d);
    }
    all.throw_if_any();
  }
  if (o.dry_run) {
    std::cout << fmt::format("dry run: {} passed validation{}; nothing was submitted\n", join(o.specs, ", "),
                             o.no_preflight || o.rank_by_estimate ? "" : " and the cluster preflight");
    if (o.rank_by_estimate) return plan(g, o, slurm);
    std::cout << fmt::format("would race shapes {}: each submitted with sbatch; the first to start trains\n",
                             join(g.labels(), ", "));
    return;
  }
  for (const auto& p : g.parts) create_output_dir(p);
  std::vector<RunPart> parts;
  for (size_t k = 0; k < g.parts.size(); ++k) parts.push_back({&g.parts[k], g.texts[k]});
  Run run = create_run(root, parts, o.sets, g.hash, {});
  init_race(run);
  for (const auto& s : render_group(g, templates_dir(o.templates), race_dir(run)))
    write_file_atomic(run.dir + "/" + s.file_name, s.text, 0755);

  std::vector<std::string> order = g.labels();
  if (o.rank_by_estimate) {
    auto ranking = rank_group(g, run.dir, !o.no_preflight, slurm);
    record_ranking(run, ranking);
    print_ranking(ranking);
    throw_if_none_runs(ranking);
    order.clear();
    for (const auto& r : ranking)
      if (!r.dropped) order.push_back(r.label);
  }
  note_world_sizes(g, order);
  std::vector<std::string> submitted = submit_shapes(run, order, slurm);
  if (submitted.empty())
    throw UserError(Location{run.dir + "/ledger.json"}, "", "no shape of the race could be submitted");
  std::cout << fmt::format("submitted race of {} as run {}: the first to start trains, the others are cancelled\n",
                           join(submitted, ", "), run.id);
  std::cout << fmt::format("  status: ddpctl status {}\n  logs:   ddpctl logs {}\n", run.id, run.id);
  if (o.wait || o.follow) wait_for_race(slurm, run, o.follow);
}

void setup_race(CLI::App& app) {
  auto opts = std::make_shared<RaceOptions>();
  CLI::App* cmd = app.add_subcommand(
      "race", "Submit several shapes (specs, or one spec's alternatives) as one group; the first to start trains");
  cmd->add_option("specs", opts->specs, "Run specs (YAML); every shape of each joins the race")->required();
  cmd->add_option("--set", opts->sets, "Override a field in every spec: KEY=VALUE with a dotted KEY");
  cmd->add_option("--runs", opts->runs, "Folder of run records (default: $DDPCTL_RUNS or ./runs)");
  cmd->add_option("--templates", opts->templates, "Folder with sbatch.sh.mustache");
  cmd->add_flag("--plan", opts->plan, "Print the shapes ranked by Slurm's estimated start; submit nothing");
  cmd->add_flag("--rank-by-estimate", opts->rank_by_estimate,
                "Ask sbatch --test-only first: drop shapes that cannot run, submit the rest earliest first");
  cmd->add_flag("--wait", opts->wait, "Show progress until a shape wins");
  cmd->add_flag("--follow", opts->follow, "Follow the winner until it ends (implies --wait)");
  cmd->add_flag("--dry-run", opts->dry_run, "Validate and preflight only; submit nothing");
  cmd->add_flag("--no-preflight", opts->no_preflight, "Skip the checks against sinfo and sacctmgr");
  cmd->add_flag("--again", opts->again, "Submit even if a job of this same race is still queued or running");
  cmd->callback([opts] { run_race(*opts); });
}

}  // namespace ddpctl::cli
