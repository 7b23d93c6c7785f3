#pragma once
// sbatch's long options and how sbatch reads a name: #SBATCH lines go through
// getopt_long, which takes any unambiguous prefix of a long option (--job is
// --job-name, --part is --partition), so a spec's `sbatch:` entry is resolved
// as sbatch would resolve it before it is checked.
#include <set>
#include <string>
#include <vector>

namespace ddpctl {

// The long options of sbatch of one Slurm version, as its getopt_long table
// has them (aliases included: tasks-per-node is ntasks-per-node).
struct SbatchOptionSet {
  std::string version;  // "22.05"
  std::vector<std::string> names;
};
// 22.05, 24.11 and 26.05: each version's sbatch asked for every prefix of
// every name (`sbatch --PREFIX=x --help`: ambiguous, unrecognized or taken;
// tests/unit/data/capture-sbatch-options.py).
const std::vector<SbatchOptionSet>& sbatch_option_sets();

enum class SbatchNameKind { Exact, Prefix, Ambiguous, Unknown };
struct SbatchName {
  SbatchNameKind kind = SbatchNameKind::Unknown;
  std::string option;                   // Exact, Prefix: the long option sbatch reads
  std::vector<std::string> candidates;  // Ambiguous: the options it could be
};
// `name` as getopt_long reads it against `options`: the option of that name,
// else the one option it begins, else ambiguous or unknown.
SbatchName resolve_sbatch_name(const std::string& name, const std::vector<std::string>& options);

// The long options an sbatch's --help (or --usage) lists: "hold", "gpus-per-node", ...
std::set<std::string> sbatch_long_options(const std::string& help_text);

// Aliases sbatch reads as another option.
std::string sbatch_canonical_option(const std::string& option);

}  // namespace ddpctl
