#pragma once
// Exactly one job per run identity (run_identity): a ddpctl holds the
// identity's lock while it looks at the earlier runs of that identity and
// submits, so that re-running `submit` (or a second ddpctl at once) never
// makes a second job of a run still queued or running.
#include <memory>
#include <optional>
#include <string>

#include "base/lock.hpp"
#include "runs/output.hpp"
#include "runs/run_store.hpp"
#include "slurm/context.hpp"
#include "slurm/slurm.hpp"

namespace ddpctl {

// Earlier runs of one identity (run_identity), settled first.
struct ActiveJob {
  std::string run_id, job_id;
};
struct EarlierRuns {
  std::optional<ActiveJob> active;  // a job of theirs still queued or running
  std::optional<Run> retry;         // a run whose every attempt was shown to make no job
};
// Settles the unconfirmed attempts of every run with this identity, then
// finds a job of theirs still queued or running, and a run to retry in.
// Throws UserError when an attempt cannot be settled or a job's state cannot
// be read: submitting then could make a second job.
EarlierRuns find_earlier_runs(const std::string& root, const std::string& identity, SlurmClient& slurm);

// Holds the lock of one run identity (runs.hpp's identity_lock_path) while
// it lives; says through `out` whom it waits for.
class IdentityLock {
 public:
  IdentityLock(const std::string& root, const std::string& identity, Context& ctx, Output& out);
  double waited_s() const;

 private:
  std::unique_ptr<FileLock> lock_;
};

}  // namespace ddpctl
