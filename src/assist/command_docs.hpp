#pragma once
// What the CLI says about itself, generated from its own definitions (never a
// hand-kept copy that drifts): shell completion (`ddpctl completion
// bash|zsh`, whose scripts call back into the hidden `ddpctl __complete` for
// subcommands, flags, spec files, runs, cluster profiles and shape labels)
// and the man pages (`ddpctl __man DIR`, run at build time). The CLI
// describes its commands as plain data (src/cli/docs.cpp); everything made
// from that description is here, where a unit test reaches it.
#include <string>
#include <vector>

#include "slurm/context.hpp"

namespace ddpctl {

struct OptionDoc {
  std::vector<std::string> names;  // every name it answers to: --long, -s
  std::string long_name;           // the first long name, without dashes ("" if none)
  std::string positional_name;     // a positional's name ("" for an option)
  std::string description, type_name;
  bool takes_value = false, required = false, many = false;
  bool positional() const { return !positional_name.empty(); }
};

struct CommandDoc {
  std::string name, description;
  bool hidden = false;  // the job agent, __complete, __man: never offered
  std::vector<OptionDoc> options;
};

struct ProgramDoc {
  std::string description;  // "ddpctl: what it is"
  std::vector<CommandDoc> commands;
};

// Candidates for words[cword] (bash's COMP_WORDS, which splits "a=b" into
// "a", "=", "b"). ":files:EXT" asks the shell for file names ending in .EXT
// (":files:" for any file).
std::vector<std::string> complete(const ProgramDoc& program, std::vector<std::string> words, size_t cword);

// The completion script for "bash" or "zsh".
const char* completion_script(const std::string& shell);

// ddpctl.1 and ddpctl-<command>.1 of every public command, into `dir`; dated
// $SOURCE_DATE_EPOCH (reproducible builds), else now.
void write_man_pages(const ProgramDoc& program, const std::string& dir, Context& ctx);

}  // namespace ddpctl
