#pragma once
// Bringing results from the login host to the user's machine
// (docs/remote.md): `ddpctl fetch RUN... --on HOST` copies runs' records
// (run.json, the ledger, scripts, metrics, progress, plots; not the jobs'
// working directories, which are links into the cluster's files) into this
// folder's runs/, and `report --plot FILE --on HOST` brings FILE back.
#include <ostream>
#include <string>
#include <vector>

#include "base/process.hpp"
#include "base/ssh.hpp"
#include "base/tar_archive.hpp"
#include "remote/remote_call.hpp"

namespace ddpctl {

// The word of the size line the login host sends first ("ddpctl-fetch BYTES",
// base/sized_stream.hpp): the most its tar will be.
inline constexpr const char* kFetchSizeWord = "ddpctl-fetch";

// The login host's sh line: in <dir>/<runs>, each target (a run id, or a
// name or prefix: its newest run) as a size line and a tar on stdout; a
// target with no run is an error naming it, or (`skip_missing`) left out.
std::vector<std::string> remote_fetch_argv(const std::string& dir_word, const std::string& runs,
                                           const std::vector<std::string>& targets, bool skip_missing = false);

// What fetch takes of the login host's answer (a tar, read_tar_members) to
// `targets`: the asked runs' files and folders, or nothing. What the host
// sends is data, never trusted paths.
struct FetchAnswer {
  std::vector<std::string> runs;     // the runs' ids, in the answer's order
  std::vector<std::string> refused;  // "'name': why", one a member, names escaped (printable)
};
// Taken, every member: under the folder of a run asked for (an id that is a
// target, or with `prefixes` a name-... of one, as the host picks a name's
// newest run), at most one run a target; a file or a folder, the run itself
// a folder; its name relative, with no empty, '.' or '..' component, UTF-8
// without control characters; not ddpctl's own mark (<run>/.fetched); not
// both a file and a folder. Any refusal refuses the whole answer.
FetchAnswer check_fetch_answer(const std::vector<TarMember>& members, const std::vector<std::string>& targets,
                               bool prefixes);

struct FetchRequest {
  RemoteTarget target;               // host, --remote-dir, home, ssh, this folder
  std::vector<std::string> targets;  // runs: id, name or prefix
  std::string runs_option;           // --runs ("": runs), there and here
  std::string local_runs_root;       // here
};
// One ssh call, its answer streamed to a file beside the runs here (a run
// may be far larger than memory), bounded by the size the host declares
// first and the free space here, and checked whole (check_fetch_answer)
// before anything is written: an answer cut short or holding anything
// refused is an error that names what, and replaces nothing. Then each run
// replaces its copy here whole, marked as a copy of that host's folder
// (.fetched in it), so that `status --on` refreshes it. Says on `out` what
// came; returns the run ids fetched.
std::vector<std::string> fetch_runs(const FetchRequest& f, CommandRunner& local, std::ostream& out);

// The copies here (under `local_runs_root`) of runs in the folder `dir_word`
// (remote_dir_word) on `host`, from its runs/, as fetch marked them.
std::vector<std::string> fetched_copies(const std::string& local_runs_root, const std::string& host,
                                        const std::string& dir_word);
// After `status --on`: the copies here of that folder's runs are fetched
// again (one ssh call, none without copies); a run gone there stays here.
// Returns how many were refreshed.
int refresh_fetched_copies(SshRunner& ssh, const std::string& dir_word,
                           const std::string& local_runs_root);
// status's AfterRemote (remote_call.hpp): refresh_fetched_copies of the
// folder there, said as "; refreshed the copies here of N run(s) in ROOT".
AfterRemote refresh_copies_after(const std::string& local_runs_root);

// Copies <dir>/<file> there to `here` (one ssh call through `ssh`): what
// the host sends is the file's bytes, written only to `here`.
void bring_back_file(SshRunner& ssh, const std::string& dir, const std::string& file, const std::string& here);
// report's AfterRemote: `--plot FILE`, which the command wrote there,
// brought back to FILE here (relative: under the target's cwd), said as
// "; brought FILE back"; an empty `file` (no --plot) brings nothing.
AfterRemote bring_back_after(const std::string& file);

}  // namespace ddpctl
