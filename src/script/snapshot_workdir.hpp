#pragma once
// The folder a run's jobs work in, made at submit from the run's snapshot,
// and the run's record of both (snapshot.json, runs/snapshot_record.hpp),
// (snapshot.hpp) and the live folder it was taken from: the snapshot's
// files linked in, and what it left out (ignored data, outputs, the logs)
// linked to where it lives.
#include <string>

#include "script/snapshot.hpp"

namespace ddpctl {

// The folder a run's jobs work in (docs/runs.md "Snapshot"): <run>/workdir,
// the snapshot's folders made anew, in which each file of the snapshot is a
// link into the snapshot and each other entry of the live folder at the same
// place (ignored data, outputs, the logs folder, files snapshot.paths did not
// name) a link to the live one; the repository's .git is left out. A file
// the job creates there stays in the run's folder. Made at submit (the job
// links in what appears in the live folder later, as each attempt starts:
// snapshot.sh); an earlier one of the same run is replaced. Returns the job's
// working directory: the submit folder's place in it.
std::string make_workdir(const std::string& run_dir, const Snapshot& snap);

// Writes snapshot.json (runs/snapshot_record.hpp reads it) (and snapshot.diff for a dirty work tree) into a run's
// folder: the snapshot and where it comes from, or why there is none; with a
// snapshot, makes the run's working directory first (make_workdir) and
// records it as "workdir".
void record_snapshot(const std::string& run_dir, const SnapshotDecision& decision);

}  // namespace ddpctl
