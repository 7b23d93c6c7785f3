#pragma once
// The report's workflows (docs/report.md): the rows of the runs and grids
// the user names (report_rows.hpp makes each), and a spec's shapes planned
// from them (`ddpctl plan`, and a race's ranking by its predicted finish).
#include <optional>
#include <string>
#include <vector>

#include "explain/report.hpp"
#include "runs/job_states.hpp"
#include "runs/output.hpp"
#include "runs/run_store.hpp"
#include "spec/run_spec.hpp"
#include "slurm/context.hpp"

namespace ddpctl {

// Rows for each run the targets name (an experiment names all of its runs;
// a race's row is its winner's), with scaling computed. Warnings (unreadable
// metrics lines, Slurm not answering) go to `out`. Throws UserError when no
// run has metrics, usage samples or a wall time yet.
std::vector<ReportRow> collect_report(const std::vector<std::string>& targets, const std::string& root,
                                      SlurmClient& slurm, Output& out, long long now);

// A row for each run (no grid among them): a race's winner, else its latest
// job; Slurm asked once for them all. Scaling is not computed
// (finish_report_rows) and no row need have metrics. Runs whose jobs
// Slurm says ended are recorded so (their ledgers re-read into `runs`).
std::vector<ReportRow> runs_report_rows(std::vector<Run>& runs, SlurmClient& slurm, Output& out, long long now);

// `ddpctl plan SPEC`: the spec's shapes predicted from measured runs.
struct PlanRequest {
  std::string spec;
  std::vector<std::string> sets;
  std::vector<std::string> from;  // runs or experiments; empty: the latest of the spec's name
  std::string runs_root;
  int epochs = 0;  // 0: the spec's trainer.epochs, else the measured runs'
  std::optional<long long> params;  // the model's parameters (--params); else the bundled model's
};
struct Plan {
  int epochs = 0;
  size_t measured = 0;  // runs read
  ReportRow base;       // the measured shape with the fewest ranks
  std::vector<Prediction> shapes;
  size_t fastest = 0, cheapest = 0;  // indexes into shapes
  bool by_gpu_hours = true;          // cheapest by GPU-hours (every shape has GPUs), else node-hours
  // The gradients each step all-reduces: the model's parameters x 4 bytes
  // (fp32 gradients), and where the count came from; none when unknown.
  std::optional<long long> params;
  std::string params_from;
};
Plan make_plan(const PlanRequest& request, SlurmClient& slurm, Output& out, long long now);
// The plan as printed: what it is from, the table of shapes, the fastest and the cheapest.
std::vector<std::string> plan_lines(const PlanRequest& request, const Plan& p);

// trainer.epochs of a spec, 0 when it sets none.
int spec_epochs(const RunSpec& spec);

// What a run trains, from its spec's text, for finding earlier runs of the
// same work: "trainer model=resnet50 data=/scratch/imagenet" (the bundled
// trainer's defaults filled in), "command <argv or line>", or "" when the
// text cannot be read.
std::string workload_of(const std::string& spec_text);

// Predicted run times of `shapes` for `epochs` (0: the measured runs'), from
// the runs under `root` whose spec has `workload` (what `plan` does with
// them). `why_not` says why there is none: no such runs, no metrics yet.
struct RunTimes {
  std::vector<Prediction> shapes;  // in the order given; empty when why_not is set
  size_t runs = 0;                 // earlier runs read
  std::string why_not;
  std::map<std::string, PreemptionSeen> preemption;  // by partition, as those runs met it
};
RunTimes predict_run_times(const std::string& workload, const std::vector<PlanShape>& shapes, int epochs,
                           const std::string& root, SlurmClient& slurm, long long now);

}  // namespace ddpctl
