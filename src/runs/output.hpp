#pragma once
// Where a long-running workflow (submit --wait, race, sweep, cancel, logs -f)
// says what happens as it happens. The CLI prints it (results on stdout,
// warnings and errors on stderr, job states in colour on a terminal); unit
// tests record it. Final results come back as return values instead; what
// a program needs to know of them (which run was made) is said as a fact,
// which --json's document takes (docs/json.md) and the human view leaves out.
#include <nlohmann/json.hpp>
#include <string>

#include "slurm/slurm_job.hpp"

namespace ddpctl {

// How a state reads at a glance; the CLI picks the colour (on a terminal).
enum class Tone { Plain, Good, Done, Waiting, Unknown, Muted, Bad };
inline Tone tone_of(JobState state) {
  switch (state) {
    case JobState::Running:
    case JobState::Completing:
      return Tone::Good;
    case JobState::Completed:
      return Tone::Done;
    case JobState::Pending:
    case JobState::Requeued:
    case JobState::Configuring:
      return Tone::Waiting;
    case JobState::Unknown:
      return Tone::Unknown;
    case JobState::Cancelled:
      return Tone::Muted;
    default:
      return Tone::Bad;
  }
}

// The ANSI SGR code a tone is painted with on a terminal ("" : none).
inline const char* tone_ansi_code(Tone tone) {
  switch (tone) {
    case Tone::Good: return "32";
    case Tone::Done: return "1;32";
    case Tone::Waiting: return "33";
    case Tone::Unknown: return "35";
    case Tone::Muted: return "2";
    case Tone::Bad: return "31";
    case Tone::Plain: break;
  }
  return "";
}

class Output {
 public:
  virtual ~Output() = default;
  // A line of results: "submitted job 12 ...".
  virtual void line(const std::string& text) = 0;
  // `prefix` then `text`, the latter coloured by its tone.
  virtual void state_line(const std::string& prefix, const std::string& text, Tone tone) = 0;
  // Text as it is (a log's new bytes), without a newline added.
  virtual void raw(const std::string& text) = 0;
  // "ddpctl: warning: ...", "ddpctl: error: ..." (the workflow goes on), "ddpctl: note: ...".
  virtual void warning(const std::string& text) = 0;
  virtual void error(const std::string& text) = 0;
  virtual void note(const std::string& text) = 0;
  // A fact for programs: `key` of the command's JSON document ("run": the
  // run it made). Said once per key; the human view ignores it.
  virtual void fact(const std::string& key, const nlohmann::json& value) { (void)key, (void)value; }
};

}  // namespace ddpctl
