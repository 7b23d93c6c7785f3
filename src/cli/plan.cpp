// ddpctl plan SPEC: time and GPU-hours of the spec's shapes, predicted from
// measured runs (by default the latest experiment or run of the spec's name).
#include <algorithm>
#include <fmt/format.h>
#include <iostream>
#include <memory>

#include "app.hpp"
#include "common.hpp"
#include "report.hpp"
#include "report_cli.hpp"
#include "resolve.hpp"
#include "text.hpp"

namespace ddpctl::cli {

namespace {

struct PlanOptions {
  std::string spec, runs;
  std::vector<std::string> from, sets;
  int epochs = 0;
};

std::string hours(double h) { return fmt::format("{:.3f}", h); }

int spec_epochs(const RunSpec& spec) {
  for (const auto& a : spec.trainer_args)
    if (a.rfind("--epochs=", 0) == 0) return std::atoi(a.c_str() + 9);
  return 0;
}

void run_plan(const PlanOptions& o) {
  ResolvedRun resolved = load_and_resolve(o.spec, o.sets);
  std::vector<std::string> from = o.from.empty() ? std::vector<std::string>{resolved.spec.name} : o.from;
  std::vector<ReportRow> measured = collect_report(from, runs_root(o.runs));
  const ReportRow* base = nullptr;
  for (const auto& r : measured)
    if (r.img_per_s && r.images_per_epoch && (!base || r.world() < base->world())) base = &r;
  int epochs = o.epochs > 0 ? o.epochs : spec_epochs(resolved.spec);
  if (epochs <= 0 && base) epochs = base->epochs;
  if (epochs <= 0)
    throw UserError(Location{o.spec}, "trainer.epochs", "how many epochs to plan for? set trainer.epochs or --epochs");
  std::vector<PlanShape> shapes;
  for (const auto& s : resolved.shapes) shapes.push_back({s.label, s.nodes, s.ranks_per_node, s.gpus_per_node});
  std::vector<Prediction> p = predict(measured, shapes, epochs);

  std::cout << fmt::format("plan for {} ({} epochs), from {} measured run(s); baseline shape {} (run {}): {:.1f} img/s, "
                           "{:.0f} images per epoch\n",
                           o.spec, epochs, measured.size(), base->label, base->run_id, *base->img_per_s,
                           *base->images_per_epoch);
  std::vector<std::vector<std::string>> rows = {
      {"SHAPE", "RANKS", "GPUS", "EFFICIENCY", "", "IMG/S", "TIME", "GPU-H", "NODE-H"}};
  for (const auto& x : p)
    rows.push_back({x.shape.label, std::to_string(x.shape.world()), std::to_string(x.shape.nodes * x.shape.gpus_per_node),
                    fmt::format("{:.0f}%", x.efficiency * 100), x.efficiency_from, fmt::format("{:.1f}", x.img_per_s),
                    format_seconds(x.time_s), x.gpu_hours ? hours(*x.gpu_hours) : "-", hours(x.node_hours)});
  for (const auto& line : format_columns(rows)) std::cout << "  " << line << '\n';
  auto fastest = std::min_element(p.begin(), p.end(), [](auto& a, auto& b) { return a.time_s < b.time_s; });
  bool gpu = std::all_of(p.begin(), p.end(), [](auto& x) { return x.gpu_hours.has_value(); });
  auto cost = [gpu](const Prediction& x) { return gpu ? *x.gpu_hours : x.node_hours; };
  auto cheapest = std::min_element(p.begin(), p.end(), [&](auto& a, auto& b) { return cost(a) < cost(b); });
  std::cout << fmt::format("fastest: {} ({}); cheapest: {} ({} {})\n", fastest->shape.label, format_seconds(fastest->time_s),
                           cheapest->shape.label, hours(cost(*cheapest)), gpu ? "GPU-hours" : "node-hours");
}

}  // namespace

void setup_plan(CLI::App& app) {
  auto opts = std::make_shared<PlanOptions>();
  CLI::App* cmd = app.add_subcommand("plan", "Predict time and GPU-hours of a spec's shapes from measured runs");
  cmd->add_option("spec", opts->spec, "Run spec (YAML): its sweep, alternatives or shape")->required();
  cmd->add_option("--from", opts->from, "Measured runs or experiments (default: the latest of the spec's name)");
  cmd->add_option("--epochs", opts->epochs, "Epochs to plan for (default: the spec's trainer.epochs)");
  cmd->add_option("--set", opts->sets, "Override a spec field: KEY=VALUE with a dotted KEY");
  cmd->add_option("--runs", opts->runs, "Folder of run records (default: $DDPCTL_RUNS or ./runs)");
  cmd->callback([opts] { run_plan(*opts); });
}

}  // namespace ddpctl::cli
