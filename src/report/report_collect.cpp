#include "report/report_collect.hpp"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>

#include "../../trainer/ddptrain_bounds.hpp"
#include "base/values.hpp"
#include "explain/comm_floor.hpp"
#include "explain/experiments.hpp"
#include "base/files.hpp"
#include "explain/race.hpp"
#include "explain/report.hpp"
#include "report/report_grid_collect.hpp"
#include "report/report_rows.hpp"
#include "script/resolve_grid.hpp"
#include "script/resolve.hpp"
#include "spec/spec.hpp"
#include "base/text.hpp"
#include "base/yaml_reader.hpp"

namespace ddpctl {

namespace fs = std::filesystem;

std::vector<ReportRow> runs_report_rows(std::vector<Run>& runs, SlurmClient& slurm, Output& out, long long now) {
  // Each run's job: a race's winner, else its latest job.
  std::vector<const Attempt*> attempts;
  std::vector<std::string> ids;
  for (const auto& run : runs) {
    const Attempt* chosen = run.latest_job();
    if (auto race = read_race(run); race.winner())
      for (const auto& a : run.attempts)
        if (a.job_id == race.winner()->job_id) chosen = &a;
    attempts.push_back(chosen);
    if (chosen) ids.push_back(chosen->job_id);
  }
  JobStates states = lookup_run_jobs(slurm, runs, ids, now);
  for (const auto& n : states.notes) out.note(n);
  // Recording re-read the ledgers: the chosen attempts as they are now.
  for (size_t i = 0, k = 0; i < runs.size(); ++i)
    if (attempts[i]) attempts[i] = job_attempt(runs[i], ids[k++]);
  if (!states.error.empty())
    out.warning("Slurm could not be asked (" + states.error + "); wall times come from the metrics files");
  std::vector<ReportRow> rows;
  std::optional<std::vector<NodeInfo>> nodes;  // asked at most once
  for (size_t i = 0; i < runs.size(); ++i) {
    const Attempt* a = attempts[i];
    const Job* job = nullptr;
    if (a) {
      const Job& j = states.jobs.at(a->job_id);
      if (j.state != JobState::Unknown) job = &j;
    }
    rows.push_back(collect_report_row(runs[i], a, job, states, slurm, nodes, out, now));
  }
  return rows;
}

std::vector<ReportRow> collect_report(const std::vector<std::string>& targets, const std::string& root,
                                      SlurmClient& slurm, Output& out, long long now) {
  std::vector<Run> all;
  for (const auto& t : targets)
    for (Run& r : find_runs(root, t)) all.push_back(std::move(r));
  // A grid of shapes (`include:` of shapes, the new spelling of `sweep:`):
  // its cells' rows (report_grid_collect.hpp), in its place among the runs'.
  std::vector<Run> runs;
  std::vector<std::vector<ReportRow>> grid_rows;  // by place in `all`; runs' places are empty
  std::vector<bool> is_grid;
  for (Run& r : all) {
    is_grid.push_back(r.grid.has_value());
    grid_rows.emplace_back();
    if (!r.grid) {
      runs.push_back(std::move(r));
      continue;
    }
    if (grid_report_kind(*r.grid) == GridReportKind::ByParameter)
      throw UserError(Location{r.id}, "",
                      "is a grid's sweep by parameter: report it on its own (`ddpctl report " + r.id +
                          "`); the scaling table is for runs of one program on several shapes");
    GridRecords records = read_grid_records(r, slurm);
    for (const auto& n : records.notes) out.warning(n);
    for (auto& t : grid_scaling_tables(r, records, slurm, out, now))
      for (auto& row : t.rows) grid_rows.back().push_back(std::move(row));
  }
  std::vector<ReportRow> run_rows = runs_report_rows(runs, slurm, out, now);
  std::vector<ReportRow> rows;
  for (size_t place = 0, i = 0; place < is_grid.size(); ++place) {
    if (is_grid[place]) {
      for (auto& row : grid_rows[place]) rows.push_back(std::move(row));
      continue;
    }
    rows.push_back(std::move(run_rows[i++]));
  }
  finish_report_rows(rows);
  return rows;
}

int spec_epochs(const RunSpec& spec) {
  for (const auto& a : spec.trainer_args)
    if (a.rfind("--epochs=", 0) == 0) return std::atoi(a.c_str() + 9);
  return 0;
}

namespace {

// The bundled trainer's images per optimizer step on `world` ranks: its
// global batch, else the batch per rank x ranks.
std::optional<long long> global_batch_of(const RunSpec& spec, int world) {
  if (spec.trainer_global_batch) return spec.trainer_global_batch;
  return spec.trainer_batch_size.value_or(ddptrain::bounds::kDefaultBatchSize) * world;
}

// "--model=resnet18" and "--classes=N" of the bundled trainer's arguments.
std::string trainer_arg(const RunSpec& spec, const std::string& option, const std::string& fallback) {
  for (const auto& a : spec.trainer_args)
    if (a.rfind(option + "=", 0) == 0) return a.substr(option.size() + 1);
  return fallback;
}

// Each shape's step time and communication floor (comm_floor.hpp), where
// the model's size and the partition's busbw are known.
void put_comm_floors(const PlanRequest& req, const RunSpec& spec, const std::vector<std::optional<long long>>& batch,
                     Plan& plan) {
  if (req.params) {
    plan.params = req.params;
    plan.params_from = "--params";
  } else if (spec.uses_trainer) {
    std::string model = trainer_arg(spec, "--model", "smallcnn");  // ddp-train's default (trainer/options.hpp)
    std::string classes = trainer_arg(spec, "--classes", "200");
    if (auto n = parse_int(classes, 2, 100000, nullptr)) plan.params = bundled_model_params(model, *n);
    if (plan.params) plan.params_from = fmt::format("the bundled {}, {} classes", model, classes);
  }
  for (size_t i = 0; i < plan.shapes.size(); ++i) {
    Prediction& p = plan.shapes[i];
    if (i < batch.size() && batch[i] && p.img_per_s > 0) p.step_s = static_cast<double>(*batch[i]) / p.img_per_s;
    if (plan.params && p.shape.busbw_gbs && p.shape.nodes > 1)
      p.comm_floor_s = comm_floor_s(4.0 * static_cast<double>(*plan.params), p.shape.world(), *p.shape.busbw_gbs);
  }
}

}  // namespace

Plan make_plan(const PlanRequest& req, SlurmClient& slurm, Output& out, long long now) {
  // A grid's shapes are its cells' (a grid of shapes: `include:` of them).
  std::string name;
  int epochs_of_spec = 0;
  std::vector<PlanShape> shapes;
  std::vector<std::optional<long long>> global_batch;  // per shape: images per optimizer step
  auto add_shape = [&](const ResolvedShape& s, const ResolvedRun& run) {
    for (const auto& x : shapes)
      if (x.label == s.label) return;  // a grid's cells of one shape
    PlanShape shape{s.label, s.nodes, s.ranks_per_node, s.gpus_per_node, {}};
    const Partition* part = run.profile.find_partition(s.partition.empty() ? run.profile.default_partition : s.partition);
    if (part) shape.busbw_gbs = part->busbw_gbs;
    shapes.push_back(shape);
    global_batch.push_back(run.spec.uses_trainer ? global_batch_of(run.spec, s.world_size()) : std::nullopt);
  };
  std::optional<RunSpec> spec;
  if (load_run_spec(req.spec, req.sets).has_grid) {
    ResolvedGrid grid = load_grid(req.spec, req.sets, "");
    name = grid.cells.at(0).spec.name;
    epochs_of_spec = spec_epochs(grid.cells.at(0).spec);
    spec = grid.cells.at(0).spec;
    for (const auto& cell : grid.cells)
      for (const auto& s : cell.shapes) add_shape(s, cell);
  } else {
    ResolvedRun resolved = load_and_resolve(req.spec, req.sets);
    name = resolved.spec.name;
    epochs_of_spec = spec_epochs(resolved.spec);
    spec = resolved.spec;
    for (const auto& s : resolved.shapes) add_shape(s, resolved);
  }
  std::vector<std::string> from = req.from.empty() ? std::vector<std::string>{name} : req.from;
  std::vector<ReportRow> measured = collect_report(from, req.runs_root, slurm, out, now);
  Plan plan;
  plan.measured = measured.size();
  const ReportRow* base = nullptr;
  for (const auto& r : measured)
    if (r.img_per_s && r.images_per_epoch && (!base || r.world() < base->world())) base = &r;
  plan.epochs = req.epochs > 0 ? req.epochs : epochs_of_spec;
  if (plan.epochs <= 0 && base) plan.epochs = base->epochs;
  if (plan.epochs <= 0)
    throw UserError(Location{req.spec}, "trainer.epochs", "how many epochs to plan for? set trainer.epochs or --epochs");
  plan.shapes = predict(measured, shapes, plan.epochs);  // throws when nothing was measured
  plan.base = *base;
  put_comm_floors(req, *spec, global_batch, plan);
  plan.by_gpu_hours = std::all_of(plan.shapes.begin(), plan.shapes.end(), [](auto& x) { return x.gpu_hours.has_value(); });
  auto cost = [&](const Prediction& x) { return plan.by_gpu_hours ? *x.gpu_hours : x.node_hours; };
  for (size_t i = 1; i < plan.shapes.size(); ++i) {
    if (plan.shapes[i].time_s < plan.shapes[plan.fastest].time_s) plan.fastest = i;
    if (cost(plan.shapes[i]) < cost(plan.shapes[plan.cheapest])) plan.cheapest = i;
  }
  return plan;
}

namespace {

// Collects nothing: predictions read earlier runs quietly.
class QuietOutput : public Output {
 public:
  void line(const std::string&) override {}
  void state_line(const std::string&, const std::string&, Tone) override {}
  void raw(const std::string&) override {}
  void warning(const std::string&) override {}
  void error(const std::string&) override {}
  void note(const std::string&) override {}
};

std::string scalar(const YAML::Node& map, const char* key, const std::string& fallback) {
  const YAML::Node v = map[key];
  return v && v.IsScalar() ? v.Scalar() : fallback;
}

}  // namespace

std::string workload_of(const std::string& spec_text) {
  try {
    YAML::Node root = YAML::Load(spec_text);
    if (!root.IsMap()) return "";
    if (const YAML::Node trainer = root["trainer"]; trainer && trainer.IsMap())
      return fmt::format("trainer model={} data={}", scalar(trainer, "model", "smallcnn"),
                         scalar(trainer, "data", "synthetic"));
    if (const YAML::Node command = root["command"]) {
      if (command.IsScalar()) return "command " + command.Scalar();
      std::vector<std::string> words;
      for (const auto& w : command)
        if (w.IsScalar()) words.push_back(w.Scalar());
      return "command " + join(words, " ");
    }
  } catch (const YAML::Exception&) {
  }
  return "";
}

RunTimes predict_run_times(const std::string& workload, const std::vector<PlanShape>& shapes, int epochs,
                           const std::string& root, SlurmClient& slurm, long long now) {
  RunTimes out;
  if (workload.empty()) {
    out.why_not = "the spec's model and data could not be read";
    return out;
  }
  std::vector<std::string> same;
  std::error_code ec;
  for (const Run& run : list_runs(root)) {
    std::string spec = run.dir + "/spec.yaml";
    if (fs::exists(spec, ec) && workload_of(read_file(spec)) == workload) same.push_back(run.dir);
  }
  out.runs = same.size();
  if (same.empty()) {
    out.why_not = fmt::format("no earlier run of {} under {}", workload, root);
    return out;
  }
  try {
    QuietOutput quiet;
    std::vector<ReportRow> measured = collect_report(same, root, slurm, quiet, now);
    if (epochs <= 0)
      for (const auto& r : measured) epochs = std::max(epochs, r.epochs);
    if (epochs <= 0) epochs = 1;
    out.preemption = preemption_seen(measured);
    out.shapes = predict(measured, shapes, epochs);
  } catch (const UserError& e) {
    out.shapes.clear();
    out.why_not = fmt::format("{} earlier run(s) of {}, but {}", same.size(), workload, e.what());
  }
  return out;
}

namespace {

// What the COMM FLOOR column rests on, and what it lacks, said once.
std::string comm_floor_note(const Plan& p) {
  if (!p.params)
    return "comm floor: the model's size is not known (a program of your own): `plan --params N` gives its "
           "parameter count";
  std::vector<std::string> missing;
  bool multi = false;
  for (const auto& x : p.shapes) {
    multi = multi || x.shape.nodes > 1;
    if (x.shape.nodes > 1 && !x.shape.busbw_gbs) missing.push_back(x.shape.label);
  }
  std::string note = fmt::format(
      "comm floor: a ring all-reduce of {:.1f} MB of fp32 gradients ({} parameters, {}) moves 2(n-1)/n of them "
      "through each rank's link: at the partition's busbw (profile) a step spends at least that communicating",
      4.0 * static_cast<double>(*p.params) / 1e6, *p.params, p.params_from);
  if (!multi) return note + "; one-node shapes only (the profile's busbw is across nodes)";
  if (!missing.empty())
    note += fmt::format("; {}: the profile has no busbw_gbs for its partition (ddpctl calibrate measures it)",
                        join(missing, ", "));
  return note;
}

}  // namespace

std::vector<std::string> plan_lines(const PlanRequest& req, const Plan& p) {
  auto hours = [](double h) { return fmt::format("{:.3f}", h); };
  std::vector<std::string> out = {
      fmt::format("plan for {} ({} epochs), from {} measured run(s); baseline shape {} (run {}): {:.1f} img/s, "
                  "{:.0f} images per epoch",
                  req.spec, p.epochs, p.measured, p.base.label, p.base.run_id, *p.base.img_per_s,
                  *p.base.images_per_epoch)};
  std::vector<std::vector<std::string>> rows = {
      {"SHAPE", "RANKS", "GPUS", "EFFICIENCY", "", "IMG/S", "TIME", "GPU-H", "NODE-H", "STEP", "COMM FLOOR"}};
  auto ms = [](const std::optional<double>& s) { return s ? fmt::format("{:.3g} ms", *s * 1000) : std::string("-"); };
  for (const auto& x : p.shapes) {
    std::string floor = ms(x.comm_floor_s);
    if (x.comm_floor_s && x.step_s) floor += fmt::format(" ({:.0f}%)", *x.comm_floor_s / *x.step_s * 100);
    rows.push_back({x.shape.label, std::to_string(x.shape.world()), std::to_string(x.shape.nodes * x.shape.gpus_per_node),
                    fmt::format("{:.0f}%", x.efficiency * 100), x.efficiency_from, fmt::format("{:.1f}", x.img_per_s),
                    format_duration(x.time_s, DurationStyle::Tenths), x.gpu_hours ? hours(*x.gpu_hours) : "-",
                    hours(x.node_hours), ms(x.step_s), floor});
  }
  for (const auto& line : format_columns(rows)) out.push_back("  " + line);
  out.push_back("  " + comm_floor_note(p));
  const Prediction& fastest = p.shapes[p.fastest];
  const Prediction& cheapest = p.shapes[p.cheapest];
  out.push_back(fmt::format("fastest: {} ({}); cheapest: {} ({} {})", fastest.shape.label, format_duration(fastest.time_s, DurationStyle::Tenths),
                            cheapest.shape.label, hours(p.by_gpu_hours ? *cheapest.gpu_hours : cheapest.node_hours),
                            p.by_gpu_hours ? "GPU-hours" : "node-hours"));
  return out;
}

}  // namespace ddpctl
