#pragma once
// A report's rows as the workflows make them (docs/report.md): one row from
// a run's attempt, its files (metrics, else its log through the spec's
// progress: pattern; usage, provenance, in-job restarts, slow ranks) and
// Slurm's word on how it failed; then the rows' scaling once all are made.
// explain/report.hpp makes a row from what is read here.
#include <optional>
#include <vector>

#include "explain/report.hpp"
#include "runs/job_states.hpp"
#include "runs/output.hpp"
#include "runs/run_store.hpp"
#include "slurm/context.hpp"

namespace ddpctl {

// make_report_row with what else there is to read of the job `attempt`
// made (null: none) as `job` says (null: Slurm did not): its metrics file,
// else the epochs its log shows through the spec's progress: pattern; how
// it failed (explain_failure with `states`, the node states asked at most
// once into `nodes`); its usage samples and environment. Unreadable
// metrics lines are warnings to `out`.
ReportRow collect_report_row(const Run& run, const Attempt* attempt, const Job* job, const JobStates& states,
                             SlurmClient& slurm, std::optional<std::vector<NodeInfo>>& nodes, Output& out,
                             long long now);
// Speedup and efficiency (compute_scaling) once every row is made; a
// UserError when no row has metrics, usage samples or a wall time yet.
void finish_report_rows(std::vector<ReportRow>& rows);

}  // namespace ddpctl
