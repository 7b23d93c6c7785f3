#pragma once
// What a job's row says in status's INFO column, and which explanation wins:
// one ordered table of explanation sources (status_explanations()), the
// highest first. Each source looks at the job (and what it left: logs,
// records, the race, the grid) and may give words and JSON; how its words
// combine with the words of every source below it is data, not statement
// order: it replaces them, goes before them or goes after them ("; "
// between). Every source is asked, in the table's order from the bottom,
// whatever the words above it: a replaced source still adds its JSON.
// docs/runs.md lists the table.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "explain/experiments.hpp"
#include "explain/race.hpp"
#include "explain/status_grid.hpp"
#include "runs/output.hpp"
#include "explain/status_extras.hpp"

namespace ddpctl {

enum class Combine {
  Replaces,  // its words stand instead of the words below
  Prefixes,  // its words, then "; " and the words below
  Appends,   // the words below, "; ", then its words
};

struct Explanation {
  std::string text;                                // empty: it adds only JSON
  nlohmann::json json = nlohmann::json::object();  // keys for the row's JSON
  std::string state;                               // non-empty: STATE shows this instead of Slurm's (STALLED)
  Tone tone = Tone::Plain;                         // with `state`
};

// What the sources look at: one job of a run (or a bare job id).
struct JobFacts {
  const JobRef& ref;
  const Job& job;
  long long now = 0;
  const RunShape* shape = nullptr;  // the attempt's shape, null for a bare job id
  StatusExtras& extras;
  // The run's race, read once per run by status; null: read when needed.
  const RaceState* race = nullptr;
  // A grid's cell (status RUN of a sweep): the run's cells and this one.
  const std::vector<CellState>* cells = nullptr;
  const CellState* cell = nullptr;
};

struct ExplanationSource {
  const char* name;  // as docs/runs.md lists it
  Combine combine;
  std::optional<Explanation> (*explain)(const JobFacts& facts);
};

// The sources, highest precedence first.
const std::vector<ExplanationSource>& status_explanations();

struct JobWords {
  std::string info;
  nlohmann::json json = nlohmann::json::object();
  std::string state;  // empty: Slurm's
  Tone tone = Tone::Plain;
};

// The table walked from its bottom row up: each source's words combined
// with those gathered below it, its JSON merged in.
JobWords explain_job(const JobFacts& facts);

// Race, then sweep: where the raced first cell's race stands ("" when it
// says nothing yet).
std::string grid_race_words(const Run& run, const std::vector<CellState>& cells);

}  // namespace ddpctl
