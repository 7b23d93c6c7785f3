#pragma once
// The code a run's jobs run, frozen at submit (docs/runs.md "Snapshot"): the
// files of the submit folder's git work tree as they are on disk — tracked
// files with their uncommitted changes and new files git does not ignore,
// never ignored ones (data, checkpoints) — or the spec's `snapshot.paths`,
// copied once into a content-addressed store under the runs folder
// (<runs>/.snapshots/<git tree id>/), so that every run of one state of the
// code shares one copy. The store's address is the git tree of those files,
// computed by git itself with a scratch index (for `paths`, in a store
// repository of its own under .snapshots/). A run's jobs work in a view of
// it (snapshot_workdir.hpp): every file of the snapshot read from the snapshot,
// whatever path the program opens it by, and what the snapshot left out
// (ignored data, outputs, the logs) linked to where it lives.
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "base/process.hpp"
#include "spec/run_spec.hpp"

namespace ddpctl {

struct Snapshot {
  std::string id;         // the git tree id of the snapshot's files
  std::string dir;        // absolute: <runs>/.snapshots/<id>
  std::string code_dir;   // where the submit folder is inside it (dir, or dir/<subfolder of the repo>)
  std::string live_dir;   // the folder whose copy `dir` is: the work tree's top (git), or the submit folder
  std::string mode;       // "git" or "paths"
  long long bytes = 0;
  long long files = 0;
  bool reused = false;    // the store already had it
  // Where a git snapshot's files come from (empty outside a git tree).
  std::string commit, branch;  // HEAD; branch empty when detached
  bool dirty = false;          // the files differ from HEAD's
  std::string diff;            // `git diff HEAD <snapshot>` when dirty
  // Taken on another machine and sent here (remote_submit.hpp): "host:folder".
  std::string sent_from;

  // The submit folder's place in the snapshot: "" at its root, else "sub/dir".
  std::string prefix() const;
};

// Why no snapshot was taken, when none was: "snapshot: false", "--no-snapshot",
// "not a git work tree", "command: is a shell line", ...
struct SnapshotDecision {
  std::optional<Snapshot> snapshot;
  std::string off_reason;
};

// Takes (or finds) the snapshot of `cwd` per `settings` in `runs_root`.
// `no_snapshot` is --no-snapshot. Throws UserError naming the spec's field
// for an explicit snapshot that cannot be taken, and for one over
// settings.max_bytes (with its largest files).
// `given`: the record of a snapshot taken elsewhere and already in a store
// here (submit --snapshot-from, which a remote submit passes: given_snapshot).
SnapshotDecision take_snapshot(const RunSpec& spec, const std::string& cwd, const std::string& runs_root,
                               bool no_snapshot, CommandRunner& runner, const std::string& given = "");

// The record a snapshot travels with to a login host (remote_submit.hpp):
// its id, commit, branch and diff, and the folder there that holds its
// files (`store`, relative to the folder the remote command runs in).
std::string snapshot_transfer_record(const Snapshot& snap, const std::string& store, const std::string& sent_from);
// That record as a snapshot of `cwd` (the remote folder the submit runs
// in; the snapshot's work-tree top when the submit folder was below it
// there too): a UserError naming --snapshot-from when the record is
// unreadable or its files are not in the store.
SnapshotDecision given_snapshot(const std::string& record_file, const std::string& cwd);

// The command's words as the job runs them with `snap`: a relative word that
// names a file of the snapshot, or a folder whose files are all in it,
// becomes its path in the snapshot (the program is found wherever the job
// runs, a container's workdir included); a folder that also holds files the
// snapshot left out (ignored data beside code) stays relative: the job's
// working directory (make_workdir) shows both. Everything else is left as
// written.
std::vector<std::string> snapshot_argv(const std::vector<std::string>& argv, const Snapshot& snap,
                                       const std::string& cwd);

}  // namespace ddpctl
