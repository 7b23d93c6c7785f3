#include "race/race_rank.hpp"

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <optional>

#include "base/files.hpp"
#include "base/text.hpp"
#include "report/report_collect.hpp"
#include "script/preemption_note.hpp"
#include "script/preflight.hpp"
#include "slurm/site_limits_read.hpp"

namespace ddpctl {

namespace fs = std::filesystem;

std::string diagnostics_line(const Diagnostics& d) {
  std::vector<std::string> parts;
  for (const auto& item : d.items()) parts.push_back(item.str());
  return join(parts, "; ");
}

namespace {

// Each shape's predicted run time, from earlier runs of its spec's model and
// data under `runs_root`; `why_not` collects why a spec has none.
void add_run_times(const RaceGroup& g, const std::string& runs_root, std::vector<RankedShape>& shapes,
                   SlurmClient& slurm, std::vector<std::string>& why_not,
                   std::map<std::string, PreemptionSeen>& preemption) {
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
    for (const auto& [partition, seen] : times.back().preemption) preemption.emplace(partition, seen);
    for (const auto& p : times.back().shapes) by_label[p.shape.label] = &p;
  }
  for (auto& r : shapes)
    if (auto it = by_label.find(r.label); it != by_label.end()) {
      r.run_time_s = it->second->time_s;
      r.run_time_from = it->second->efficiency_from;
    }
}

// A shape on preemptible capacity (its profile's partition says
// `preemptible:`) expects to lose time to preemptions: its run time grows by
// what earlier runs there met (expected_preemption_s), and its note says so.
void add_expected_preemption(const RaceGroup& g, const std::map<std::string, PreemptionSeen>& seen,
                             std::vector<RankedShape>& shapes) {
  for (const auto& e : g.entries) {
    const ResolvedShape& s = g.shape(e);
    const ResolvedRun& part = g.parts[e.part];
    const std::string partition = s.partition.empty() ? part.profile.default_partition : s.partition;
    if (!preemptible_terms(part, s)) continue;  // its partition's or its QOS's contract
    for (auto& r : shapes) {
      if (r.label != s.label || r.dropped || !r.run_time_s) continue;
      auto it = seen.find(s.partition);
      if (it == seen.end()) it = seen.find(partition);
      std::string note;
      double extra = expected_preemption_s(it == seen.end() ? nullptr : &it->second, partition, *r.run_time_s, note);
      *r.run_time_s += extra;
      if (extra > 0) r.run_time_from += " + preemptions";
      r.note = r.note.empty() ? note : r.note + "; " + note;
    }
  }
}

}  // namespace

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
        r.why_dropped = "preflight: " + diagnostics_line(d);
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
  std::map<std::string, PreemptionSeen> preemption;
  add_run_times(g, req.runs_root, shapes, slurm, why_not, preemption);
  add_expected_preemption(g, preemption, shapes);
  std::vector<RankedShape> ranked = rank_by_finish(shapes, static_cast<long long>(std::time(nullptr)), note);
  if (!note.empty() && !why_not.empty()) note += " (" + join(why_not, "; ") + ")";
  return ranked;
}

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

}  // namespace ddpctl
