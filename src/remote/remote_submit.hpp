#pragma once
// `ddpctl submit|race|sweep SPEC --on HOST` (docs/remote.md): submitting
// from the user's own machine. The decisions and the records stay on the
// cluster: the cluster's ddpctl of this version (or this version's portable
// build, installed there first: remote_install.hpp) submits in the folder
// there whose runs/ holds the runs, the one the login node's own commands
// use, so the run identity's lock, the ledger and the token that make a
// submission exactly-once are the same whichever side submits.
//
// What goes with the job: the spec files, to the same place under that
// folder as they have under this one (the run identity includes the spec's
// path, so the login node's `ddpctl submit SPEC` there is the same run), and
// the code, as a snapshot taken here as on the login node (snapshot.hpp) and
// sent into the store of that runs folder once per code state. In ssh calls:
//   1. the probe (which ddpctl is there, the folder, whether the store has
//      this snapshot);
//   2. installing the portable build, only when there is no ddpctl of this
//      version there;
//   3. the snapshot's files, only when the store does not have them;
//   4. the submit itself, with the specs and the snapshot's record on its
//      stdin, run by the ddpctl there with `--snapshot-from`.
#include <ostream>
#include <string>
#include <vector>

#include "base/process.hpp"
#include "base/environment.hpp"
#include "remote/remote_call.hpp"

namespace ddpctl {

struct RemoteSubmit {
  RemoteTarget target;             // host, --remote-dir, home, ssh, version, this folder
  std::vector<std::string> words;  // after `ddpctl`, --on and --remote-dir left out
  std::vector<std::string> specs;  // the spec files as given (under this folder)
  std::vector<std::string> sets;   // --set, for the snapshot's settings
  std::string local_runs_root;     // where the snapshot is taken into here (runs_root(--runs))
  std::string runs_option;         // --runs as given ("": runs): the store's folder there
  bool snapshot = true;            // false: --no-snapshot
  bool dry_run = false;            // --dry-run: nothing is sent but the specs
  std::string portable;            // $DDPCTL_PORTABLE
  std::string sent_from;           // "host:folder" of this machine, for the records
};

// A remote submit of `specs` through `target` as this machine makes it: the
// portable build to install there ($DDPCTL_PORTABLE) and where it is sent
// from ("host:folder"), from `env`.
RemoteSubmit remote_submit_for(RemoteTarget target, std::vector<std::string> words, std::vector<std::string> specs,
                               std::vector<std::string> sets, const std::string& runs_option,
                               const std::string& local_runs_root, bool snapshot, bool dry_run, const Environment& env);

// Where each spec goes under the remote folder: its path relative to this
// folder (`./-n.yaml` for one that begins with `-`: the place is also the
// word the ddpctl there reads, which must not be an option). A UserError naming the spec when it is not a file here or not in
// this folder or below (its place there would be unknown).
std::vector<std::string> remote_spec_places(const std::vector<std::string>& specs, const std::string& cwd);

// The upload's sh line: the tar of <id>/ on stdin into
// <dir>/<runs>/.snapshots/<id>, checked to hold `files` entries, renamed into
// place whole (a store that has it already keeps its own).
std::vector<std::string> remote_snapshot_upload_argv(const std::string& dir_word, const std::string& runs,
                                                     const std::string& id, long long files);

// The submit's sh line: makes the folder, unpacks the bundle on stdin
// (spec.0, spec.1, ... and snapshot.json) into <runs>/.incoming/<token>,
// puts each spec at its place (a different file there is kept beside it as
// <name>.replaced-<UTC time>, and said), runs `ddpctl_words` with stdin
// /dev/null, and removes the bundle.
std::vector<std::string> remote_submit_argv(const std::string& dir_word, const std::string& runs,
                                            const std::string& token, const std::vector<std::string>& places,
                                            const std::string& ddpctl, const std::vector<std::string>& words);

// The words the ddpctl there runs: the user's, with the spec words as their
// places there and `--snapshot-from RECORD` after the subcommand when a
// snapshot goes along.
std::vector<std::string> remote_submit_words(std::vector<std::string> words, const std::vector<std::string>& specs,
                                             const std::vector<std::string>& places, const std::string& record);

// Does it all; returns the remote submit's exit status (its output is this
// terminal's: `terminal`) and says on `err` what was sent and how many ssh
// calls it took.
int run_remote_submit(const RemoteSubmit& s, CommandRunner& local, std::ostream& err,
                      TerminalRunner& terminal = this_terminal());

}  // namespace ddpctl
