#include "cli/common.hpp"
#include "cli/json_output.hpp"

#include <cstdlib>
#include <fmt/format.h>
#include <filesystem>
#include <iostream>
#include <unistd.h>

#include "base/paths.hpp"
#include "race/race_again.hpp"
#include "remote/remote.hpp"
#include "remote/remote_submit.hpp"
#include "runs/run_store.hpp"
#include "base/ssh.hpp"
#include "sweep/grid_continuation.hpp"
#include "sites/site_caller.hpp"
#include "sites/sites_status.hpp"
#include "sites/winning_site.hpp"
#include "base/version.hpp"

namespace ddpctl::cli {

namespace {
// The words after `ddpctl`, the parser's words not yet taken (app.cpp), and
// the --on and --remote-dir options as the parser took them.
struct CommandWords {
  std::vector<std::string> words;
  const std::vector<std::string>* unparsed = nullptr;
  std::vector<TakenOption> taken;
};
CommandWords& command_words() {
  static CommandWords w;
  return w;
}

// Called by the parser as it takes the option (trigger_on_parse): what is
// left to parse says where the option's words end.
void note_taken(const std::string& name, const std::string& value) {
  CommandWords& w = command_words();
  if (w.unparsed) w.taken.push_back({name, value, w.words.size() - w.unparsed->size()});
}
}  // namespace

const std::vector<std::string>& typed_words() { return command_words().words; }

void set_command_words(int argc, char** argv, const std::vector<std::string>* unparsed) {
  command_words().words.assign(argv + std::min(argc, 1), argv + argc);
  command_words().unparsed = unparsed;
  command_words().taken.clear();
}

void add_remote_options(CLI::App* cmd, RemoteOptions& o) {
  cmd->add_option("--on", o.on,
                  "Run it on this login host, with its ddpctl of this version, through your own ssh (user@host or a "
                  "Host of your ~/.ssh/config; docs/remote.md)")
      ->trigger_on_parse()
      ->each([&o](const std::string& v) {
        o.on_given = true;
        note_taken("--on", v);
      });
  cmd->add_option("--remote-dir", o.dir,
                  "With --on: the folder there whose runs/ holds the runs (default: this folder's path under your "
                  "home, under the remote home)")
      ->trigger_on_parse()
      ->each([](const std::string& v) { note_taken("--remote-dir", v); });
}

bool remote_asked(const RemoteOptions& o) {
  if (!o.on_given) {
    if (!o.dir.empty()) throw UserError(Location{"--remote-dir"}, "", "goes with --on HOST");
    return false;
  }
  check_ssh_host(o.on);  // `--on ''` (an unset $HOST) is an error, not "here"
  return true;
}

RemoteTarget remote_target(const RemoteOptions& o, Context& ctx) { return remote_target_for(o.on, o.dir, ctx.env); }

namespace {
// The words the user typed, less the --on and --remote-dir the parser took.
std::vector<std::string> remote_words() { return without_taken_options(command_words().words, command_words().taken); }
}  // namespace

void run_on_remote_if_asked(const RemoteOptions& o, Context& ctx, const AfterRemote& after) {
  if (!remote_asked(o)) return;
  std::cout.flush();
  RemoteCall call{remote_words(), after};
  RemoteSession session(remote_target(o, ctx), ctx.runner);
  int code = run_remote_call(call, session, ::isatty(0) && ::isatty(1) && !json_capture(), std::cerr);
  if (JsonCapture* c = json_capture()) c->relayed();
  throw CLI::RuntimeError(code);
}

void run_at_winning_site(const std::string& query, const std::string& runs_option, const std::string& command,
                         Context& ctx, const AfterRemote& after) {
  std::optional<std::string> dir = find_site_race(runs_root(runs_option), query);
  if (!dir) return;
  const RemoteTarget base = race_remote_base(*dir, ctx.env);
  SshSiteCaller sites(base, ctx.runner);
  WinningSiteCall call = winning_site_call(*dir, query, remote_words(), base, sites, command);
  std::cerr << call.said << '\n';
  std::cout.flush();
  RemoteSession session(call.target, ctx.runner);
  int code = run_remote_call(RemoteCall{call.words, after}, session, ::isatty(0) && ::isatty(1) && !json_capture(),
                             std::cerr);
  if (JsonCapture* c = json_capture()) c->relayed();
  throw CLI::RuntimeError(code);
}

void add_remote_submit_options(CLI::App* cmd, RemoteOptions& o, std::string& snapshot_from) {
  add_remote_options(cmd, o);
  // What a remote submit passes the ddpctl on the login host: the code it
  // sent, already in the runs folder's store there.
  cmd->add_option("--snapshot-from", snapshot_from, "The record of a snapshot sent by `--on` (ddpctl's own use)")
      ->group("");
}

void add_site_options(CLI::App* cmd, AcrossSites& across) {
  // What the coordinator of a race across sites asks each site's ddpctl
  // (docs/race.md "Across sites"): that site's shapes, and the gate.
  cmd->add_option("--site", across.site, "Only the shapes at this site (`on:`) of a spec naming sites (ddpctl's own use)")
      ->group("");
  cmd->add_option("--coordinator", across.coordinator, "The race's run on the machine that submitted (ddpctl's own use)")
      ->group("");
  cmd->add_option("--gate-timeout", across.gate_s,
                  "A race across sites: the longest a started job waits at its gate for the coordinator's grant, in "
                  "seconds (default 300)")
      ->check(CLI::Range(1, 86400));
}

void submit_on_remote_if_asked(const RemoteOptions& o, const RemoteSubmitOptions& s, Context& ctx) {
  if (!remote_asked(o)) return;
  RemoteSubmit r = remote_submit_for(remote_target(o, ctx), remote_words(), s.specs, s.sets, s.runs, runs_root(s.runs),
                                     s.snapshot, s.dry_run, ctx.env);
  std::cout.flush();
  int code = run_remote_submit(r, ctx.runner, std::cerr);
  if (JsonCapture* c = json_capture()) c->relayed();
  throw CLI::RuntimeError(code);
}

std::string templates_dir(const std::string& flag) {
  if (!flag.empty()) return flag;
  if (const char* env = std::getenv("DDPCTL_TEMPLATES"); env && *env) return env;
  return data_dir() + "/templates";
}

bool use_color() {
  static const bool on = isatty(STDOUT_FILENO) && !std::getenv("NO_COLOR");
  return on && !json_capture();  // a document for programs is never painted
}

std::string paint(const std::string& text, Tone tone) {
  const char* code = tone_ansi_code(tone);
  if (!use_color() || !*code) return text;
  return std::string("\033[") + code + "m" + text + "\033[0m";
}

void note_lock_wait(double seconds) {
  if (const char* t = std::getenv("DDPCTL_TIMINGS"); t && *t)
    std::cerr << "ddpctl: timing: lock_wait_s " << seconds << '\n';
}

void ConsoleOutput::line(const std::string& text) { std::cout << text << std::endl; }
void ConsoleOutput::state_line(const std::string& prefix, const std::string& text, Tone tone) {
  std::cout << prefix << paint(text, tone) << std::endl;
}
void ConsoleOutput::raw(const std::string& text) {
  std::cout << text;
  std::cout.flush();
}
void ConsoleOutput::warning(const std::string& text) { std::cerr << "ddpctl: warning: " << text << '\n'; }
void ConsoleOutput::error(const std::string& text) { std::cerr << "ddpctl: error: " << text << '\n'; }
void ConsoleOutput::note(const std::string& text) { std::cerr << "ddpctl: note: " << text << '\n'; }
void ConsoleOutput::fact(const std::string& key, const nlohmann::json& value) { json_fact(key, value); }

void add_rank_by_options(CLI::App* cmd, std::string& rank_by) {
  CLI::Option* by = cmd->add_option("--rank-by", rank_by,
                                    "Race: rank the shapes first. start: by Slurm's estimated start (sbatch --test-only); "
                                    "finish: by predicted finish (start + run time from earlier runs), dropping shapes "
                                    "that cannot finish first. Shapes that cannot run are dropped either way")
                        ->check(CLI::IsMember({"start", "finish"}));
  cmd->add_flag_callback("--rank-by-estimate", [&rank_by] { rank_by = "start"; }, "Same as --rank-by start")
      ->excludes(by);
}

void SideOutput::line(const std::string& text) { std::cerr << "ddpctl: " << text << std::endl; }
void SideOutput::state_line(const std::string& prefix, const std::string& text, Tone) {
  std::cerr << "ddpctl: " << prefix << text << std::endl;
}

}  // namespace ddpctl::cli
