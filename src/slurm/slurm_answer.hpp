#pragma once
// What Slurm answers, as ddpctl's parsers see it: who wrote a --json
// document (JsonSource, from the document's own `meta`, never guessed from a
// failure) and the two ways reading an answer fails.
//
// --json documents are read by the generation of the data parser that wrote
// them, taken from the document's own `meta` (never guessed from a failure):
//   v0.0.37/38  Slurm 21.08/22.05 (openapi plugins): job_state a string,
//               times plain numbers, exit_code a raw wait status; nodes in
//               `sinfo --json`.
//   v0.0.39     23.02: as above, but time_limit a {set, infinite, number}.
//   v0.0.40+    23.11, 24.05, 24.11 (and the same fields through 26.05's
//               v0.0.45): job_state an array of base state and flags, every
//               time and limit a {set, infinite, number}, exit_code
//               {status, return_code, signal}; `sinfo --json` has node groups,
//               per-node detail comes from `scontrol show nodes --json`.
// A field of a shape its generation never writes is a SlurmFormatError that
// names the Slurm release, the data parser and the field. Slurm's own errors
// ("errors" with exit 0, e.g. the controller is down) are SlurmAnswerError.
//
//
// One file per thing read: slurm_json (Reader: how each generation writes a
// field), slurm_parse_jobs (squeue, sacct), slurm_parse_nodes (sinfo,
// scontrol show nodes, GRES/TRES) and slurm_parse_replies (sbatch's replies).
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

namespace ddpctl {

// Slurm answered, with an error (e.g. --json's "errors" when the controller is down).
struct SlurmAnswerError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A --json document that does not have the shape its data parser writes.
struct SlurmFormatError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Who wrote a --json document, from its `meta`.
struct JsonSource {
  std::string release;  // "22.05.8", "24.11.5"; empty when meta does not say
  int parser = 0;       // the data parser's last number: 38 for v0.0.38 ... 42 for v0.0.42; 0 unknown
  std::string describe() const;  // "Slurm 24.11.5 (data_parser v0.0.42)"
};
// Throws SlurmFormatError when meta names no data parser ddpctl can read.
JsonSource json_source(const nlohmann::json& doc, const std::string& command);

// Whether `sinfo --json` of this Slurm lists nodes itself (22.05), or node
// groups, so that per-node detail needs `scontrol show nodes --json`.
bool sinfo_lists_nodes(const JsonSource& source);

}  // namespace ddpctl
