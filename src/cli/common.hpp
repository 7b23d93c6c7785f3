#pragma once
// What several subcommands share: where templates live, colour on a
// terminal, the Output that prints a workflow's messages, and the race
// command (`race`, and `submit` of a spec with alternatives).
#include <string>

#include "context.hpp"
#include "output.hpp"
#include "race_group.hpp"

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
};

// With $DDPCTL_TIMINGS set: how long the run's lock held this submit up, on
// stderr (bench/submit_faults.sh reads it).
void note_lock_wait(double seconds);

// Races the request's shapes and prints the outcome; `plan` only ranks them,
// `wait`/`follow` then wait for a winner (and follow it).
void race_command(const RaceRequest& request, bool plan, bool wait, bool follow, Context& ctx);

}  // namespace ddpctl::cli
