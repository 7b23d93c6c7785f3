#pragma once
// Slurm's pending and ending reason codes (squeue's %r, sacct's Reason) in
// plain words, with what to do. Slurm has ~200 codes; most are built from
// one grammar — (Assoc|QOS)(Grp|Max|Min)<resource>[PerJob|PerNode|PerUser|
// PerAccount][Minutes|RunMinutes][Limit] — which is read as such, and the
// rest are named one by one. docs/slurm.md "Pending reasons" groups them.
#include <string>

namespace ddpctl {

struct ReasonWords {
  std::string words;  // what holds the job
  std::string todo;   // what to do about it; empty when waiting is all
  // It will not start by waiting: a limit the job itself breaks, a held or
  // invalid job, a dependency that failed.
  bool never = false;
};

// Empty words for "None" and no reason; an unknown code is returned as it is.
// squeue's longer forms ("ReqNodeNotAvail, Reserved for maintenance") keep
// their detail.
ReasonWords reason_words(const std::string& reason);

// "words; todo" (or the words alone): what status and --wait print.
std::string explain_reason(const std::string& reason);

}  // namespace ddpctl
