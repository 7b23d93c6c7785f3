#pragma once
// What several subcommands share: where templates live, colour on a
// terminal, the Output that prints a workflow's messages, and the race
// command (`race`, and `submit` of a spec with alternatives).
#include <CLI/CLI.hpp>
#include <string>

#include "remote/remote_call.hpp"
#include "slurm/context.hpp"
#include "runs/output.hpp"
#include "race/race_group.hpp"

namespace ddpctl::cli {

// --templates, else $DDPCTL_TEMPLATES, else the bundled templates.
std::string templates_dir(const std::string& flag);

// ANSI colour only when stdout is a terminal and NO_COLOR is unset.
bool use_color();
std::string paint(const std::string& text, Tone tone);

// Prints a workflow's messages: lines on stdout, warnings and errors on stderr.
class ConsoleOutput : public Output {
 public:
  void line(const std::string& text) override;
  void state_line(const std::string& prefix, const std::string& text, Tone tone) override;
  void raw(const std::string& text) override;
  void warning(const std::string& text) override;
  void error(const std::string& text) override;
  void note(const std::string& text) override;
  void fact(const std::string& key, const nlohmann::json& value) override;
};

// For what a command does besides its result (status, logs re-racing a
// group): every line on stderr, so stdout stays the result (--json too).
class SideOutput : public ConsoleOutput {
 public:
  void line(const std::string& text) override;
  void state_line(const std::string& prefix, const std::string& text, Tone tone) override;
};

// --rank-by start|finish and its older spelling --rank-by-estimate (= start),
// into `rank_by` (submit and race).
void add_rank_by_options(CLI::App* cmd, std::string& rank_by);

// With $DDPCTL_TIMINGS set: how long the run's lock held this submit up, on
// stderr (bench/submit_faults.sh reads it).
void note_lock_wait(double seconds);

// --on HOST and --remote-dir DIR (docs/remote.md): the command runs on the
// login host, with the ddpctl of this version there.
struct RemoteOptions {
  std::string on, dir;
  bool on_given = false;  // --on was given, even as `--on ''`
};
void add_remote_options(CLI::App* cmd, RemoteOptions& o);
// Whether --on was given; a UserError where its host cannot be one (empty
// or blank: an unset $HOST in a script must not run the command here) or
// --remote-dir comes without it.
bool remote_asked(const RemoteOptions& o);
// Where --on goes (remote_call.hpp), from this folder and the environment.
RemoteTarget remote_target(const RemoteOptions& o, Context& ctx);
// With --on: runs the command as the user typed it on that host
// (remote_call.hpp), then `after` (the command's own: report's --plot
// brought back, status's fetched copies refreshed), and ends ddpctl with its
// exit status; without, returns.
void run_on_remote_if_asked(const RemoteOptions& o, Context& ctx, const AfterRemote& after = nullptr);
// A race across sites (docs/race.md "Across sites") named by `query`: the
// command as typed runs at the site whose job won, on that site's run there
// (`--on` of the site, the race's id replaced by the site's run), then
// `after`, and ends ddpctl with its exit status. Returns when `query` names
// no race across sites; a race no job won yet is refused, saying why.
void run_at_winning_site(const std::string& query, const std::string& runs_option, const std::string& command,
                         Context& ctx, const AfterRemote& after = nullptr);
// submit, race and sweep with --on: the specs and the code go to the login
// host and its ddpctl of this version submits there (remote_submit.hpp);
// ends ddpctl with its exit status. Without --on, returns. Also adds the
// hidden --snapshot-from that the remote side runs with.
struct RemoteSubmitOptions {
  std::vector<std::string> specs, sets;
  std::string runs;  // --runs as given
  bool snapshot = true, dry_run = false;
};
void submit_on_remote_if_asked(const RemoteOptions& o, const RemoteSubmitOptions& s, Context& ctx);
void add_remote_submit_options(CLI::App* cmd, RemoteOptions& o, std::string& snapshot_from);
// --site, --coordinator, --gate-timeout: one site of a race across sites.
void add_site_options(CLI::App* cmd, AcrossSites& across);
// The words after `ddpctl`, kept by app.cpp for run_on_remote_if_asked,
// and `unparsed`, the reversed words the parser takes from its back: as it
// takes --on and --remote-dir, what is left says which words they were.
void set_command_words(int argc, char** argv, const std::vector<std::string>* unparsed);
// The words after `ddpctl` as typed.
const std::vector<std::string>& typed_words();

// Races the request's shapes and prints the outcome; `plan` only ranks them,
// `wait`/`follow` then wait for a winner (and follow it).
void race_command(const RaceRequest& request, bool plan, bool wait, bool follow, Context& ctx);

}  // namespace ddpctl::cli
