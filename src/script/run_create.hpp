#pragma once
// Making a run in the store (runs/run_store.hpp) from what was resolved:
// its folder with the spec as given, run.json (the resolved shapes, each
// with its script's #SBATCH directives), the rendered scripts and an empty
// ledger, before anything is submitted.
#include <string>
#include <utility>
#include <vector>

#include "runs/run_store.hpp"
#include "script/resolve.hpp"

namespace ddpctl {

// Creates the run directory with spec.yaml, run.json, the scripts and an empty ledger.
Run create_run(const std::string& root, const ResolvedRun& resolved, const std::string& spec_text,
               const std::vector<std::string>& overrides, const std::string& hash,
               const std::vector<std::pair<std::string, std::string>>& scripts);

// One spec of a run made from several (`ddpctl race A.yaml B.yaml`): its
// shapes join the run's, each remembering its spec and output folder.
struct RunPart {
  const ResolvedRun* resolved;
  std::string spec_text;
};
// As above; the run's name, cluster and cwd come from the first part. With
// several parts the specs are kept as spec.yaml (the first), spec.2.yaml, ...
// `id` (new_run_id) when the scripts had to know it before the run existed.
Run create_run(const std::string& root, const std::vector<RunPart>& parts, const std::vector<std::string>& overrides,
               const std::string& hash, const std::vector<std::pair<std::string, std::string>>& scripts,
               const std::string& id = "");
}  // namespace ddpctl
