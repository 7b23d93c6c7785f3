// ddpctl diff RUN_A RUN_B: spec, code and script differences (src/explain/run_diff.hpp).
#include <iostream>
#include <memory>

#include "cli/app.hpp"
#include "cli/json_output.hpp"
#include "cli/common.hpp"
#include "explain/run_diff.hpp"

namespace ddpctl::cli {

void setup_diff(CLI::App& app, Context& ctx) {
  struct Options {
    std::string a, b, runs;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("diff", "Show what differs between two runs: spec, code (snapshots) and scripts");
  cmd->add_option("run_a", o->a, "Run (name, id or path), or a job id")->required();
  cmd->add_option("run_b", o->b, "Run (name, id or path), or a job id")->required();
  cmd->add_option("--runs", o->runs, "Folder of run records (default: $DDPCTL_RUNS or ./runs)");
  cmd->callback([o, &ctx] {
    std::string root = runs_root(o->runs);
    RunDiff d = diff_runs(find_run(root, o->a), find_run(root, o->b), ctx.runner);
    json_fact("runs", nlohmann::json::array({o->a, o->b}));
    json_fact("same", d.same);
    json_fact("diff", d.text);
    std::cout << d.text;
    if (d.same) std::cout << "the two runs ran the same spec, code and script\n";
  });
}

}  // namespace ddpctl::cli
