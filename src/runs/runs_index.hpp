#pragma once
// Which runs `status` reads: those not ended, or ended within a window, and
// for the others an index beside them (<runs>/.index.json, .index-views)
// that spares reading thousands of ended runs, one by one, at every status.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runs/run_record.hpp"

namespace ddpctl {

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

}  // namespace ddpctl
