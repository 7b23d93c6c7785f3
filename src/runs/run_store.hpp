#pragma once
// The run store: runs/<name>-<utc>-<token>/ with the spec as given, the
// resolved shapes (run.json), the rendered scripts, and the ledger
// (ledger.hpp) of every sbatch attempt; finding and loading runs. A run is
// made at submit from what was resolved (script/run_create.hpp).
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runs/ledger.hpp"
#include "runs/run_record.hpp"

namespace ddpctl {

// --runs, else $DDPCTL_RUNS, else ./runs.
std::string runs_root(const std::string& flag);
std::string utc_now_iso();
long long parse_utc_iso(const std::string& s);  // 0 if unreadable
// One spec file as submitted: its path and the text read from it.
struct SpecSource {
  std::string path, text;
};
// What makes two submissions "the same run", as a hash: the specs (absolute
// paths and texts), the --set overrides, and which shape was submitted
// (`shape`), or, with `shape` empty, that every shape races as one group.
// submit, race and sweep all ask this one function.
std::string run_identity(const std::vector<SpecSource>& specs, const std::vector<std::string>& overrides,
                         const std::string& shape);

// "<name>-<UTC stamp>-<6 hex>": a run folder's name.
std::string new_run_id(const std::string& name, const std::string& created_at);
// Writes run.grid as grid.json in the run folder (atomically); load_run reads it.
void save_grid(const Run& run);
// Where the lock of one run identity lives: <runs>/.locks/<identity>.lock.
std::string identity_lock_path(const std::string& root, const std::string& identity);
Run load_run(const std::string& dir);
// Every run under root, oldest first; unreadable ones are skipped.
std::vector<Run> list_runs(const std::string& root);
// Whether an entry of a runs folder is a run's folder (it holds run.json).
bool is_run_dir(const std::filesystem::directory_entry& entry);
// Oldest first: by creation, then by id.
void sort_runs(std::vector<Run>& runs);
// A run by directory path, directory name, unique prefix of it, or run name
// (the latest run of that name), or a job id of one of its attempts. Throws
// UserError when none or several match.
Run find_run(const std::string& root, const std::string& query);

// The checkpoint folder a run's jobs are given: DDPCTL_CHECKPOINT_DIR in its
// first shape's script (relative: to the folder it was submitted from); ""
// when the script names none.
std::string run_checkpoint_folder(const Run& run);

}  // namespace ddpctl
