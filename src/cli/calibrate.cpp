// ddpctl calibrate PARTITION --profile FILE: the partition's all-reduce bus
// bandwidth measured and, with --write, put in the profile (src/submit/calibrate.hpp).
#include <fmt/format.h>
#include <iostream>
#include <memory>

#include "cli/app.hpp"
#include "cli/common.hpp"
#include "cli/json_output.hpp"
#include "runs/output.hpp"
#include "submit/calibrate.hpp"

namespace ddpctl::cli {

namespace {

nlohmann::json measure_json(const FabricMeasure& m) {
  return {{"run", m.run_id},
          {"nodes", m.nodes},
          {"node_count", m.node_count},
          {"busbw_gbs", m.busbw_gbs ? nlohmann::json(*m.busbw_gbs) : nlohmann::json()},
          {"problem", m.problem}};
}

std::string gbs(const std::optional<double>& v) { return v ? fmt::format("{:.4g} GB/s", *v) : std::string("-"); }

void say(const CalibrateRequest& r, const Calibration& c) {
  auto line = [](const char* what, const FabricMeasure& m) {
    std::cout << fmt::format("  {:<6} {} node(s) {}: busbw {}{}\n", what, m.node_count, m.nodes.empty() ? "?" : m.nodes,
                             gbs(m.busbw_gbs), m.problem.empty() ? "" : " (" + m.problem + ")");
  };
  std::cout << fmt::format("calibrate {}: all-reduce of {} fp32, ring (nccl-tests' busbw)\n", r.partition, r.size);
  for (const auto& m : c.pairs) line("pair", m);
  if (c.whole && (c.pairs.size() != 1 || c.pairs.front().run_id != c.whole->run_id)) line("all", *c.whole);
  if (!c.median_gbs) {
    std::cout << "no figure: no run measured (above)\n";
    return;
  }
  std::cout << fmt::format("busbw_gbs: {:.4g} (median of {} pair(s); {} to {})\n", *c.median_gbs, c.pairs.size(),
                           gbs(c.min_gbs), gbs(c.max_gbs));
  std::cout << (c.written ? fmt::format("written into {} (partitions.{}.busbw_gbs)\n", r.profile, r.partition)
                          : fmt::format("to keep it: `busbw_gbs: {:.4g}` in partitions.{} of {} (or --write)\n",
                                        *c.median_gbs, r.partition, r.profile));
}

}  // namespace

void setup_calibrate(CLI::App& app, Context& ctx) {
  struct Options {
    CalibrateRequest req;
    std::string runs, templates;
    RemoteOptions remote;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "calibrate", "Measure a partition's all-reduce bus bandwidth (ddp-train --allreduce-bench) for its profile");
  cmd->add_option("partition", o->req.partition, "The partition to measure")->required();
  cmd->add_option("--profile", o->req.profile, "The site's profile file (read; written with --write)")->required();
  cmd->add_option("--nodes", o->req.nodes, "Nodes of the whole set (2 or more; 4 or more also measure disjoint pairs)");
  cmd->add_option("--size", o->req.size, "The all-reduce's size in bytes (K, M, G: 1024s)");
  cmd->add_option("--iters", o->req.iters, "All-reduces timed")->check(CLI::Range(1, 100000));
  cmd->add_flag("--write", o->req.write, "Write the pairs' median into the profile as partitions.NAME.busbw_gbs");
  cmd->add_option("--runs", o->runs, "Folder of run records (default: $DDPCTL_RUNS or ./runs)");
  cmd->add_option("--templates", o->templates, "Folder with template parts to use instead of the bundled ones");
  add_remote_options(cmd, o->remote);
  cmd->callback([o, &ctx] {
    run_on_remote_if_asked(o->remote, ctx);
    o->req.runs_root = runs_root(o->runs);
    o->req.templates_dir = templates_dir(o->templates);
    o->req.work_dir = o->req.runs_root + "/calibrate";
    ConsoleOutput out;
    Calibration c = calibrate(o->req, ctx, out);
    nlohmann::json pairs = nlohmann::json::array();
    for (const auto& m : c.pairs) pairs.push_back(measure_json(m));
    json_fact("partition", o->req.partition);
    json_fact("profile", o->req.profile);
    json_fact("pairs", pairs);
    json_fact("whole", c.whole ? measure_json(*c.whole) : nlohmann::json());
    json_fact("busbw_gbs", c.median_gbs ? nlohmann::json(*c.median_gbs) : nlohmann::json());
    json_fact("min_gbs", c.min_gbs ? nlohmann::json(*c.min_gbs) : nlohmann::json());
    json_fact("max_gbs", c.max_gbs ? nlohmann::json(*c.max_gbs) : nlohmann::json());
    json_fact("written", c.written);
    say(o->req, c);
    if (!c.median_gbs) throw CLI::RuntimeError(1);
  });
}

}  // namespace ddpctl::cli
