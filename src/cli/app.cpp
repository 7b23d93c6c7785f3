#include "cli/app.hpp"

#include <algorithm>
#include <memory>
#include <sstream>
#include <fmt/format.h>
#include <iostream>
#include <string>
#include <vector>

#include "base/clock.hpp"
#include "cli/common.hpp"
#include "cli/json_into.hpp"
#include "cli/json_output.hpp"
#include "base/json_document.hpp"
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
      {"cancel", setup_cancel}, {"logs", setup_logs}, {"diff", setup_diff}, {"container", setup_container}, {"init", setup_init}, {"doctor", setup_doctor}, {"fetch", setup_fetch}, {"completion", setup_docs}, {"job", setup_job}, {"events", setup_events}, {"schema", setup_schema}, {"tune", setup_tune}, {"calibrate", setup_calibrate},
  };
  return table;
}

// The commands that print a document of their own kind with --json
// (docs/json.md); the job's, the coordinator's and a site's own commands
// speak their own protocols, and `events` prints its stream as it is.
const std::vector<std::pair<std::string, std::string>>& json_kinds() {
  static const std::vector<std::pair<std::string, std::string>> kinds = {
      {"gen", "gen"},       {"submit", "submit"}, {"race", "race"},   {"sweep", "sweep"},   {"status", "status"},
      {"report", "report"}, {"plan", "plan"},     {"cancel", "cancel"}, {"logs", "logs"},     {"diff", "diff"},
      {"init", "init"},     {"doctor", "doctor"}, {"fetch", "fetch"},   {"schema", "schemas"}, {"container", "container"},
      {"race-again", "race"}, {"calibrate", "calibrate"}};
  return kinds;
}

std::string json_kind_of(const std::string& command) {
  for (const auto& [name, kind] : json_kinds())
    if (name == command) return kind;
  return "";
}

// --version --json: this ddpctl and the majors of every document it prints,
// which a program checks before it reads any (the Python client does).
nlohmann::json version_document() {
  nlohmann::json doc = json_document("version");
  doc["version"] = DDPCTL_VERSION;
  doc["commit"] = DDPCTL_COMMIT;
  nlohmann::json majors = nlohmann::json::object();
  for (const auto& [name, kind] : json_kinds()) majors[kind] = {kJsonMajor};
  for (const char* kind : {"error", "version", "event"}) majors[kind] = {kJsonMajor};
  majors["status"] = {0, kJsonMajor};
  majors["report"] = {0, kJsonMajor};
  doc["documents"] = majors;
  return doc;
}

void print_user_error(const UserError& e) {
  for (const Diagnostic& d : e.diagnostics()) std::cerr << "ddpctl: error: " << d.str() << '\n';
  if (e.diagnostics().size() > 1) std::cerr << fmt::format("ddpctl: {} errors\n", e.diagnostics().size());
}

// --json on every command that prints a document (json_output.hpp); a
// command that reads it itself (status) has its own; --json-into on the
// commands that make or watch runs.
void add_json_options(CLI::App& app) {
  static int json_major_option = -1;
  static std::string json_into_file;
  for (CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (!json_kind_of(sub->get_name()).empty() && !sub->get_option_no_throw("--json"))
      sub->add_flag("--json{1}", json_major_option, "Print one JSON document for programs (docs/json.md)")
          ->check(CLI::Range(kOldestJsonMajor, kJsonMajor));
    // The human view on the terminal, the runs' events into a file.
    for (const char* name : {"submit", "race", "sweep", "status"})
      if (sub->get_name() == name)
        sub->add_option("--json-into", json_into_file,
                        "Also write the events of the runs it makes (status --watch: shows) into FILE, as `ddpctl "
                        "events` prints them (docs/json.md)")
            ->trigger_on_parse()
            ->each([](const std::string& file) { start_json_into(file); });
  }
}

// CLI11 says only "The following argument was not expected"; a typo in the
// subcommand deserves a suggestion. False (said) when argv[1] names none.
bool known_command(CLI::App& app, int argc, char** argv) {
  std::vector<std::string> names, every;
  for (const CLI::App* s : app.get_subcommands([](const CLI::App*) { return true; })) {
    every.push_back(s->get_name());
    if (!s->get_group().empty()) names.push_back(s->get_name());  // hidden ones are not suggested
  }
  if (argc > 1 && argv[1][0] != '-') {
    std::string word = argv[1];
    if (std::find(every.begin(), every.end(), word) == every.end()) {
      std::cerr << fmt::format("ddpctl: error: unknown command {}{}; commands: {}\n", printable(word),
                               did_you_mean(word, names), join(names, ", "));
      return false;
    }
  }
  return true;
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
  add_json_options(app);
  struct IntoEnds {
    ~IntoEnds() { finish_json_into(); }
  } into_ends;
  // CLI11 takes the words from the back of this reversed list: --on looks
  // at what is left as it is taken (set_command_words).
  std::vector<std::string> unparsed(argv + std::min(argc, 1), argv + argc);
  std::reverse(unparsed.begin(), unparsed.end());
  set_command_words(argc, argv, &unparsed);
  if (!known_command(app, argc, argv)) return kUsage;

  // JSON mode (docs/json.md): one document on stdout, whatever happens.
  std::vector<std::string> words(argv + std::min(argc, 1), argv + argc);
  const int json_major = json_major_asked(words);
  if (json_major >= 0 && std::find(words.begin(), words.end(), "--version") != words.end() &&
      (words.empty() || words[0][0] == '-')) {
    std::cout << version_document().dump() << std::endl;
    return kOk;
  }
  const std::string kind = argc > 1 ? json_kind_of(argv[1]) : "";
  std::unique_ptr<JsonCapture> capture;
  // Major 0 is status's and report's bare document of before the envelope.
  if (json_major >= 1 && !kind.empty()) capture = std::make_unique<JsonCapture>(kind, json_major);
  auto fail = [&](int code, const std::vector<Diagnostic>& errors, const std::string& human) {
    if (capture) capture->finish(code, errors);
    std::cerr << human;
    return code;
  };
  try {
    app.parse(unparsed);
  } catch (const CLI::RuntimeError& e) {
    // `ddpctl job ...` exit statuses the sbatch script reads; a remote
    // command's own; a command that says why itself.
    if (capture) capture->finish(e.get_exit_code());
    return e.get_exit_code();
  } catch (const CLI::ParseError& e) {
    if (capture && e.get_exit_code() != 0)
      return fail(kUsage, {Diagnostic{Location{}, "", e.what()}}, "");
    capture.reset();
    int code = app.exit(e);
    return code == 0 ? kOk : kUsage;
  } catch (const UserError& e) {
    if (!capture) {
      print_user_error(e);
      return kUserError;
    }
    std::ostringstream human;
    for (const Diagnostic& d : e.diagnostics()) human << "ddpctl: error: " << d.str() << '\n';
    return fail(kUserError, e.diagnostics(), human.str());
  } catch (const std::exception& e) {
    return fail(kInternal, {Diagnostic{Location{}, "", std::string("internal error: ") + e.what()}},
                std::string("ddpctl: internal error: ") + e.what() + "\n");
  }
  if (capture) capture->finish(kOk);
  return kOk;
}

}  // namespace ddpctl::cli
