// ddpctl report RUN|EXPERIMENT...: the scaling table of runs; --plot draws it
// through gnuplot (src/explain/report.hpp). A grid's sweep: its cells by parameter,
// and the scaling table of the shapes it varies (src/report/report_grid_collect.hpp).
#include <ctime>
#include <fmt/format.h>
#include <iostream>
#include <memory>

#include "cli/app.hpp"
#include "cli/common.hpp"
#include "cli/json_output.hpp"
#include "explain/report.hpp"
#include "report/report_collect.hpp"
#include "report/report_plot_run.hpp"
#include "explain/report_table.hpp"
#include "report/report_grid_collect.hpp"
#include "report/report_study.hpp"
#include "explain/experiments.hpp"
#include "remote/remote_fetch.hpp"
#include "base/text.hpp"
#include "sites/sites_status.hpp"

namespace ddpctl::cli {

namespace {

struct ReportOptions {
  std::vector<std::string> targets;
  std::string runs, format = "table", plot;
  RemoteOptions remote;
  std::optional<std::string> seed_key;  // a grid's sweep only
  std::string best, plot_metric, x;
};

GridReportOptions grid_options(const ReportOptions& o) {
  return {o.seed_key, o.best.empty() ? std::nullopt : std::optional<BestBy>(parse_best(o.best))};
}

// A report by parameter as asked (format, --json under `key`, --plot).
void print_by_parameter(const GridReports& r, const char* key, const ReportOptions& o, Context& ctx) {
  std::vector<std::string> warnings;
  if (json_capture()) json_fact(key, nlohmann::json::parse(format_grid_reports(r, "json", warnings)));
  else std::cout << format_grid_reports(r, o.format, warnings);
  for (const auto& w : warnings) std::cerr << "ddpctl: warning: " << w << '\n';
  if (o.plot.empty()) return;
  for (const auto& line : plot_grid_reports(r, o.plot, o.plot_metric, o.x, ctx.runner))
    std::cerr << "ddpctl: " << line << '\n';
}

void print_grid_report(const Run& run, const ReportOptions& o, Context& ctx) {
  ConsoleOutput out;
  print_by_parameter(collect_grid_reports(run, ctx.slurm, grid_options(o), out, ctx.clock.now()), "grid", o, ctx);
}

// A study (ddpctl tune): its trials by parameter, printed as a grid's are.
void print_study_report(const Experiment& study, const ReportOptions& o, Context& ctx) {
  ConsoleOutput out;
  GridReports r;
  r.by_parameter = study_report(study, runs_root(o.runs), ctx.slurm, grid_options(o), out, ctx.clock.now());
  print_by_parameter(r, "study", o, ctx);
}

void run_report(const ReportOptions& o, Context& ctx) {
  const std::vector<std::string> formats = {"table", "markdown", "csv", "json"};
  if (std::find(formats.begin(), formats.end(), o.format) == formats.end())
    throw UserError(Location{"--format"}, "", fmt::format("{}: one of table, markdown, csv, json{}", printable(o.format),
                                                         did_you_mean(o.format, formats)));
  if (o.targets.size() == 1)
    if (auto e = find_experiment(runs_root(o.runs), o.targets.front()); e && e->is_study())
      return print_study_report(*e, o, ctx);
  if (auto grid = grid_run_of(o.targets, runs_root(o.runs))) return print_grid_report(*grid, o, ctx);
  for (const auto& [given, name] : {std::pair{!o.best.empty(), "--best"}, {o.seed_key.has_value(), "--seed-key"},
                                    {!o.plot_metric.empty(), "--plot-metric"}, {!o.x.empty(), "--x"}})
    if (given) throw UserError(Location{name}, "", "is for the report of a grid's sweep (`ddpctl report SWEEP`)");
  ConsoleOutput out;
  std::vector<ReportRow> rows = collect_report(o.targets, runs_root(o.runs), ctx.slurm, out, ctx.clock.now());
  if (json_capture()) {  // --json: the rows in the report's document
    json_fact("rows", nlohmann::json::parse(report_json(rows)));
    for (const auto& note : {mixed_code_note(rows), mixed_provenance_note(rows)})
      if (!note.empty()) std::cerr << "ddpctl: warning: " << note << '\n';
  } else if (o.format == "table") std::cout << report_table(rows);
  if (o.format == "markdown") std::cout << report_markdown(rows);
  if (o.format == "csv") std::cout << report_csv(rows);
  if (o.format == "json") std::cout << report_json(rows);
  // The table and Markdown say it in their notes; CSV and JSON have no place for it.
  if (!json_capture() && (o.format == "csv" || o.format == "json"))
    for (const auto& note : {mixed_code_note(rows), mixed_provenance_note(rows)})
      if (!note.empty()) std::cerr << "ddpctl: warning: " << note << '\n';
  if (o.plot.empty()) return;
  for (const auto& line : plot_report(rows, o.plot, ctx.runner)) std::cerr << "ddpctl: " << line << '\n';
}

}  // namespace

void setup_report(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<ReportOptions>();
  CLI::App* cmd = app.add_subcommand("report", "Scaling table of runs, experiments or a grid of shapes "
                                               "(throughput, speedup, efficiency, time, GPU-hours, memory); a grid's "
                                               "cells by parameter");
  cmd->add_option("targets", o->targets, "Runs or experiments (name, id or path)")->required();
  cmd->add_option("--format", o->format, "table (default), markdown, csv or json");
  cmd->add_option("--plot", o->plot, "Also draw speedup and efficiency into FILE.svg or FILE.png (gnuplot)");
  cmd->add_option("--seed-key", o->seed_key, "A grid's seed axis: mean ± std over it (default: the key named "
                                             "*seed; 'none': a row per cell)");
  cmd->add_option("--best", o->best, "Mark a grid's best cell by METRIC:min or METRIC:max (e.g. val_loss:min)");
  cmd->add_option("--plot-metric", o->plot_metric, "A grid's metric to plot (default: the --best metric)");
  cmd->add_option("--x", o->x, "The grid key on the plot's x axis (default: the first that is not the seed's)");
  cmd->add_option("--runs", o->runs, "Folder of run records (default: $DDPCTL_RUNS or ./runs)");
  add_remote_options(cmd, o->remote);
  cmd->callback([o, &ctx] {
    // What the command wrote there that the user asked for here.
    run_on_remote_if_asked(o->remote, ctx, bring_back_after(o->plot));
    // A race across sites: the winner's run, reported at its site.
    for (const auto& t : o->targets)
      if (find_site_race(runs_root(o->runs), t)) {
        if (o->targets.size() > 1)
          throw UserError(Location{t}, "", "is a race across sites: report it alone (it is reported at its winning "
                                           "site), or `ddpctl fetch` its run first and report that with the others");
        run_at_winning_site(t, o->runs, "report", ctx, bring_back_after(o->plot));
      }
    run_report(*o, ctx);
  });
}

}  // namespace ddpctl::cli
