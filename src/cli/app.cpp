#include "cli/app.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <iostream>
#include <string>
#include <vector>

#include "base/clock.hpp"
#include "cli/common.hpp"
#include "ddpctl_version.hpp"
#include "base/diagnostics.hpp"
#include "base/process.hpp"
#include "slurm/slurm.hpp"
#include "base/text.hpp"


namespace ddpctl::cli {

namespace {

struct Subcommand {
  const char* name;
  void (*setup)(CLI::App&, Context&);
};

const std::vector<Subcommand>& subcommands() {
  static const std::vector<Subcommand> table = {
      {"gen", setup_gen},       {"submit", setup_submit}, {"race", setup_race}, {"race-again", setup_race_again}, {"race-gate", setup_race_gate}, {"race-checkpoint", setup_race_checkpoint}, {"coordinate", setup_coordinate}, {"sweep", setup_sweep}, {"status", setup_status}, {"report", setup_report}, {"plan", setup_plan},
      {"cancel", setup_cancel}, {"logs", setup_logs}, {"diff", setup_diff}, {"container", setup_container}, {"init", setup_init}, {"doctor", setup_doctor}, {"fetch", setup_fetch}, {"completion", setup_docs}, {"job", setup_job},
  };
  return table;
}

void print_user_error(const UserError& e) {
  for (const Diagnostic& d : e.diagnostics()) std::cerr << "ddpctl: error: " << d.str() << '\n';
  if (e.diagnostics().size() > 1) std::cerr << fmt::format("ddpctl: {} errors\n", e.diagnostics().size());
}

}  // namespace

int run(int argc, char** argv) {
  CLI::App app{"ddpctl: distributed (DDP) training on Slurm from one YAML run spec", "ddpctl"};
  app.set_version_flag("--version", std::string("ddpctl ") + DDPCTL_VERSION + " (git " + DDPCTL_COMMIT + ")");
  app.require_subcommand(1);
  // The one runner and SlurmClient every subcommand uses.
  SystemCommandRunner runner;
  SlurmClient slurm(runner);
  SystemClock clock;
  SystemEnvironment env;
  Context ctx{runner, slurm, clock, env, poll_interval_from_env()};
  for (const auto& s : subcommands()) s.setup(app, ctx);
  // CLI11 takes the words from the back of this reversed list: --on looks
  // at what is left as it is taken (set_command_words).
  std::vector<std::string> unparsed(argv + std::min(argc, 1), argv + argc);
  std::reverse(unparsed.begin(), unparsed.end());
  set_command_words(argc, argv, &unparsed);
  std::vector<std::string> names, every;
  for (const CLI::App* s : app.get_subcommands([](const CLI::App*) { return true; })) {
    every.push_back(s->get_name());
    if (!s->get_group().empty()) names.push_back(s->get_name());  // hidden ones are not suggested
  }

  // CLI11 says only "The following argument was not expected"; a typo in the
  // subcommand deserves a suggestion.
  if (argc > 1 && argv[1][0] != '-') {
    std::string word = argv[1];
    if (std::find(every.begin(), every.end(), word) == every.end()) {
      std::cerr << fmt::format("ddpctl: error: unknown command {}{}; commands: {}\n", printable(word),
                               did_you_mean(word, names), join(names, ", "));
      return kUsage;
    }
  }

  try {
    app.parse(unparsed);
  } catch (const CLI::RuntimeError& e) {
    return e.get_exit_code();  // `ddpctl job ...` exit statuses the sbatch script reads
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? kOk : kUsage;
  } catch (const UserError& e) {
    print_user_error(e);
    return kUserError;
  } catch (const std::exception& e) {
    std::cerr << "ddpctl: internal error: " << e.what() << '\n';
    return kInternal;
  }
  return kOk;
}

}  // namespace ddpctl::cli
