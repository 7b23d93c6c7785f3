#pragma once
// The run store: runs/<name>-<utc>-<token>/ with the spec as given, the
// resolved shapes (run.json), the rendered scripts, and the ledger
// (ledger.hpp) of every sbatch attempt; finding and loading runs.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runs/ledger.hpp"
#include "script/resolve.hpp"
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
// "<name>-<UTC stamp>-<6 hex>": a run folder's name.
std::string new_run_id(const std::string& name, const std::string& created_at);
// Writes run.grid as grid.json in the run folder (atomically); load_run reads it.
void save_grid(const Run& run);
// Where the lock of one run identity lives: <runs>/.locks/<identity>.lock.
std::string identity_lock_path(const std::string& root, const std::string& identity);
Run load_run(const std::string& dir);
// Every run under root, oldest first; unreadable ones are skipped.
std::vector<Run> list_runs(const std::string& root);
// When a run ended for good: the latest end of its jobs as its ledger
// records them (JobEnd), or its creation when it made none; nullopt while a
// job has no recorded end or an attempt is unsettled (intent, unconfirmed).
std::optional<long long> run_ended_at(const Run& run);

// `status` without arguments shows the runs still active and those that
// ended within this window; the rest are counted ("N older runs: --all").
constexpr long long kRecentRunsS = 24 * 3600;

// The runs under root that had not ended for good before `since` (Unix s),
// oldest first, and how many others there are. A runs folder of thousands
// of ended runs is not read run by run each time: <root>/.index.json keeps
// when each ended run ended (and <root>/.index-views what status showed of
// it), valid only for the ledger it was read from
// (its inode, size and modification time), so that a ledger changed since,
// an index that is missing, stale or damaged, only means reading the runs
// again. The index is never the only truth.
struct IndexedRun {
  std::string id, created_at;
  long long ended_at = 0;
  std::string view;  // what status kept of the run when it was last read
};
struct RecentRuns {
  std::vector<Run> runs;
  size_t older = 0;
  std::vector<Run> to_index;         // older runs read because the index lacked them
  std::vector<IndexedRun> indexed;   // with `views`: ended runs the index answers for, not read
};
// `only`, when given, picks the run folders worth reading by their path
// (e.g. race groups), before anything is read from them. With `views`, an
// ended run whose ledger is unchanged since the index kept a view of it
// (index_ended_runs) comes as that view instead of being read: nothing
// Slurm or its files say of an ended run changes any more.
RecentRuns recent_runs(const std::string& root, long long since,
                       const std::function<bool(const std::string& dir)>& only = {}, bool views = false);
// Keeps in the index (atomically; a folder it cannot write is left alone)
// when each of `runs` that ended did, read again from its ledger as it is
// now, and the view (by run id) made from it, if its attempts are still
// the ledger's.
void index_ended_runs(const std::string& root, const std::vector<const Run*>& runs,
                      const std::map<std::string, std::string>& views = {});

// A run by directory path, directory name, unique prefix of it, or run name
// (the latest run of that name), or a job id of one of its attempts. Throws
// UserError when none or several match.
Run find_run(const std::string& root, const std::string& query);

}  // namespace ddpctl
