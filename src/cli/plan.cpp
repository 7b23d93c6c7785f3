// ddpctl plan SPEC: time and GPU-hours of the spec's shapes, predicted from
// measured runs (by default the latest experiment or run of the spec's name).
#include <fmt/format.h>
#include <iostream>
#include <memory>

#include "cli/app.hpp"
#include "cli/json_output.hpp"
#include "cli/common.hpp"
#include "report/report_collect.hpp"
#include "base/text.hpp"

namespace ddpctl::cli {

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
  cmd->add_option("--params", o->req.params,
                  "The model's parameter count, for the communication floor (default: the bundled trainer's model)")
      ->check(CLI::Range(1LL, 1000000000000LL));
  cmd->callback([o, &ctx] {
    o->req.runs_root = runs_root(o->runs);
    ConsoleOutput out;
    const Plan plan = make_plan(o->req, ctx.slurm, out, ctx.clock.now());
    nlohmann::json shapes = nlohmann::json::array();
    for (size_t i = 0; i < plan.shapes.size(); ++i) {
      const Prediction& p = plan.shapes[i];
      shapes.push_back({{"shape", p.shape.label}, {"nodes", p.shape.nodes}, {"ranks_per_node", p.shape.ranks_per_node},
                        {"gpus_per_node", p.shape.gpus_per_node}, {"efficiency", p.efficiency},
                        {"efficiency_from", p.efficiency_from}, {"img_per_s", p.img_per_s}, {"time_s", p.time_s},
                        {"node_hours", p.node_hours},
                        {"gpu_hours", p.gpu_hours ? nlohmann::json(*p.gpu_hours) : nlohmann::json()},
                        {"step_s", p.step_s ? nlohmann::json(*p.step_s) : nlohmann::json()},
                        {"comm_floor_s", p.comm_floor_s ? nlohmann::json(*p.comm_floor_s) : nlohmann::json()},
                        {"busbw_gbs", p.shape.busbw_gbs ? nlohmann::json(*p.shape.busbw_gbs) : nlohmann::json()},
                        {"fastest", i == plan.fastest}, {"cheapest", i == plan.cheapest}});
    }
    json_fact("shapes", shapes);
    json_fact("epochs", plan.epochs);
    json_fact("measured_runs", plan.measured);
    json_fact("params", plan.params ? nlohmann::json(*plan.params) : nlohmann::json());
    for (const auto& line : plan_lines(o->req, plan)) std::cout << line << '\n';
  });
}

}  // namespace ddpctl::cli
