#pragma once
// A run's record as the documents and events show it to programs
// (docs/json.md): the same keys everywhere — run, name, cluster, dir, and
// per job: job, shape, outcome, array, cluster, reason.
#include <nlohmann/json.hpp>

#include "runs/output.hpp"
#include "runs/run_record.hpp"

namespace ddpctl {

// One attempt of the ledger: {"job": id or null, "shape", "outcome", ...}.
nlohmann::json attempt_json(const Attempt& a);
// The run: {"run": id, "name", "cluster", "dir", "jobs": [attempt_json...]}.
nlohmann::json run_json(const Run& run);
// Says run_json's keys as facts of the command's document (Output::fact).
void state_run(Output& out, const Run& run);
// The event of an attempt's sbatch answer (submitted, rejected, unconfirmed).
nlohmann::json answer_event_fields(const Attempt& a);

}  // namespace ddpctl
