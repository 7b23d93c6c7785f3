#pragma once
// The variables the job script sets for the program: env: entries as the
// script assigns them, and every name it sets (what provenance records and
// a container is given).
#include <string>
#include <vector>

#include "script/resolve.hpp"

namespace ddpctl {

// An env: entry as the script assigns it: `export NAME=<this>` (the value
// quoted, a user's $NAME expanding; ddpctl's own DDPCTL_ values verbatim).
std::string env_assigned(const std::string& name, const std::string& value);
// The entries as one line of `export NAME=...` statements joined by "; ",
// as the script would run them one by one (a big grid's cells' table,
// resolve_grid.hpp).
std::string env_exports(const EnvList& env);

// Every variable the script sets for the program.
std::vector<std::string> script_env_names(const ResolvedRun& run);

}  // namespace ddpctl
