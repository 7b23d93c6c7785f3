// ddpctl report RUN|EXPERIMENT...: the scaling table of runs; --plot draws it
// through gnuplot (src/report.hpp).
#include <ctime>
#include <fmt/format.h>
#include <iostream>
#include <memory>

#include "app.hpp"
#include "common.hpp"
#include "report.hpp"
#include "text.hpp"

namespace ddpctl::cli {

namespace {

struct ReportOptions {
  std::vector<std::string> targets;
  std::string runs, format = "table", plot;
};

void run_report(const ReportOptions& o, Context& ctx) {
  const std::vector<std::string> formats = {"table", "markdown", "csv", "json"};
  if (std::find(formats.begin(), formats.end(), o.format) == formats.end())
    throw UserError(Location{"--format"}, "", fmt::format("{}: one of table, markdown, csv, json{}", printable(o.format),
                                                         did_you_mean(o.format, formats)));
  ConsoleOutput out;
  std::vector<ReportRow> rows = collect_report(o.targets, runs_root(o.runs), ctx.slurm, out, ctx.clock.now());
  if (o.format == "table") std::cout << report_table(rows);
  if (o.format == "markdown") std::cout << report_markdown(rows);
  if (o.format == "csv") std::cout << report_csv(rows);
  if (o.format == "json") std::cout << report_json(rows);
  // The table and Markdown say it in their notes; CSV and JSON have no place for it.
  if (o.format == "csv" || o.format == "json")
    for (const auto& note : {mixed_code_note(rows), mixed_environment_note(rows)})
      if (!note.empty()) std::cerr << "ddpctl: warning: " << note << '\n';
  if (o.plot.empty()) return;
  for (const auto& line : plot_report(rows, o.plot, ctx.runner)) std::cerr << "ddpctl: " << line << '\n';
}

}  // namespace

void setup_report(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<ReportOptions>();
  CLI::App* cmd = app.add_subcommand("report", "Scaling table of runs or experiments: throughput, speedup, "
                                               "efficiency, time, GPU-hours, memory");
  cmd->add_option("targets", o->targets, "Runs or experiments (name, id or path)")->required();
  cmd->add_option("--format", o->format, "table (default), markdown, csv or json");
  cmd->add_option("--plot", o->plot, "Also draw speedup and efficiency into FILE.svg or FILE.png (gnuplot)");
  cmd->add_option("--runs", o->runs, "Folder of run records (default: $DDPCTL_RUNS or ./runs)");
  cmd->callback([o, &ctx] { run_report(*o, ctx); });
}

}  // namespace ddpctl::cli
