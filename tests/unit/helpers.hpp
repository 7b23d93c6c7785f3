#pragma once
// Shared helpers for the unit tests.
#include <string>
#include <utility>
#include <vector>

#include "base/diagnostics.hpp"

namespace ddpctl::test {

// Runs `f` and returns the UserError's full text ("" if none was thrown).
template <class F>
std::string user_error_of(F&& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

// Runs a bash script with `args` as $1.. and returns its standard output.
std::string run_bash(const std::string& script, const std::vector<std::string>& args = {});

std::string source_dir();

// A file's whole text, "" if it cannot be read.
std::string slurp(const std::string& path);
// Writes `text` to `path`, creating the folders above it.
void write(const std::string& path, const std::string& text);

inline constexpr long long kGiB = 1024LL * 1024 * 1024;
// A fake clock's start (2026-11-21), where the watchers' tests begin.
inline constexpr double T0 = 1795300000;

// A fresh folder under the system's temporary directory, removed with
// everything in it at the end of the scope.
struct TempDir {
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string path;
};

}  // namespace ddpctl::test

namespace ddpctl {
struct Run;
namespace test {
// A run of configs/local-cpu.yaml created under `root` (its ledger empty):
// what the run store's and the ledger's tests start from.
Run make_local_cpu_run(const std::string& root);

// Runs made as submit makes them (script/run_create.hpp), and their
// snapshot records, for the tests of the folders beside script/ on its floor
// (agent/, explain/), which include none of it.
struct SpecPart {
  std::string file;        // a spec file, resolved with `sets`
  std::string text;        // what the run keeps as its spec.yaml (spec.N.yaml)
  std::string output_dir;  // when set, the part's output_dir instead of its spec's
};
Run make_run(const std::string& root, const std::vector<SpecPart>& parts, const std::vector<std::string>& sets,
             const std::string& hash, const std::vector<std::pair<std::string, std::string>>& scripts,
             const std::string& id = "");
// The run id submit would give a run of `spec_file` (resolved with `sets`).
std::string new_id_of(const std::string& spec_file, const std::vector<std::string>& sets);
// snapshot.json of a git snapshot of `files` (name, text) with id `id`,
// stored under `store`, taken from the live folder `live`.
void record_git_snapshot(const std::string& run_dir, const std::string& id, const std::string& store,
                         const std::string& live, const std::vector<std::pair<std::string, std::string>>& files,
                         const std::string& commit = "");
// snapshot.json of a run without a snapshot, and why.
void record_no_snapshot(const std::string& run_dir, const std::string& why);
}  // namespace test
}  // namespace ddpctl
