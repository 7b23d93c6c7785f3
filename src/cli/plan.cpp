// ddpctl plan SPEC: time and GPU-hours of the spec's shapes, predicted from
// measured runs (by default the latest experiment or run of the spec's name).
#include <fmt/format.h>
#include <iostream>
#include <memory>

#include "app.hpp"
#include "common.hpp"
#include "report.hpp"
#include "text.hpp"

namespace ddpctl::cli {

namespace {

std::string hours(double h) { return fmt::format("{:.3f}", h); }

void print_plan(const PlanRequest& req, const Plan& p) {
  std::cout << fmt::format("plan for {} ({} epochs), from {} measured run(s); baseline shape {} (run {}): {:.1f} img/s, "
                           "{:.0f} images per epoch\n",
                           req.spec, p.epochs, p.measured, p.base.label, p.base.run_id, *p.base.img_per_s,
                           *p.base.images_per_epoch);
  std::vector<std::vector<std::string>> rows = {
      {"SHAPE", "RANKS", "GPUS", "EFFICIENCY", "", "IMG/S", "TIME", "GPU-H", "NODE-H"}};
  for (const auto& x : p.shapes)
    rows.push_back({x.shape.label, std::to_string(x.shape.world()), std::to_string(x.shape.nodes * x.shape.gpus_per_node),
                    fmt::format("{:.0f}%", x.efficiency * 100), x.efficiency_from, fmt::format("{:.1f}", x.img_per_s),
                    format_seconds(x.time_s), x.gpu_hours ? hours(*x.gpu_hours) : "-", hours(x.node_hours)});
  for (const auto& line : format_columns(rows)) std::cout << "  " << line << '\n';
  const Prediction& fastest = p.shapes[p.fastest];
  const Prediction& cheapest = p.shapes[p.cheapest];
  std::cout << fmt::format("fastest: {} ({}); cheapest: {} ({} {})\n", fastest.shape.label,
                           format_seconds(fastest.time_s), cheapest.shape.label,
                           hours(p.by_gpu_hours ? *cheapest.gpu_hours : cheapest.node_hours),
                           p.by_gpu_hours ? "GPU-hours" : "node-hours");
}

}  // namespace

void setup_plan(CLI::App& app, Context& ctx) {
  struct Options {
    PlanRequest req;
    std::string runs;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("plan", "Predict time and GPU-hours of a spec's shapes from measured runs");
  cmd->add_option("spec", o->req.spec, "Run spec (YAML): its sweep, alternatives or shape")->required();
  cmd->add_option("--from", o->req.from, "Measured runs or experiments (default: the latest of the spec's name)");
  cmd->add_option("--epochs", o->req.epochs, "Epochs to plan for (default: the spec's trainer.epochs)");
  cmd->add_option("--set", o->req.sets, "Override a spec field: KEY=VALUE with a dotted KEY");
  cmd->add_option("--runs", o->runs, "Folder of run records (default: $DDPCTL_RUNS or ./runs)");
  cmd->callback([o, &ctx] {
    o->req.runs_root = runs_root(o->runs);
    ConsoleOutput out;
    print_plan(o->req, make_plan(o->req, ctx.slurm, out, ctx.clock.now()));
  });
}

}  // namespace ddpctl::cli
