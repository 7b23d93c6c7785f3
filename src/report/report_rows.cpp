#include "report/report_rows.hpp"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>

#include "explain/comm_floor.hpp"
#include "explain/rank_account.hpp"
#include "explain/usage_account.hpp"
#include "runs/fabric_record.hpp"
#include "runs/in_job_record.hpp"
#include "runs/run_store.hpp"
#include "runs/provenance_record.hpp"
#include "runs/slow_record.hpp"
#include "base/diagnostics.hpp"
#include "base/text.hpp"
#include "explain/failure.hpp"
#include "explain/requeue.hpp"
#include "runs/progress_read.hpp"
#include "runs/task_logs.hpp"
#include "runs/usage.hpp"
#include "explain/status_extras.hpp"

namespace ddpctl {

namespace fs = std::filesystem;

ReportRow collect_report_row(const Run& run, const Attempt* a, const Job* job, const JobStates& states,
                             SlurmClient& slurm, std::optional<std::vector<NodeInfo>>& nodes, Output& out,
                             long long now) {
  ReportRow probe = make_report_row(run, a, job, nullptr, now);
  MetricsFile metrics;
  if (!probe.metrics_path.empty()) metrics = read_metrics(probe.metrics_path);
  for (const auto& w : metrics.warnings) out.warning(w);
  // A program ddpctl did not write: the epochs its log shows through the spec's progress: pattern.
  std::string pattern_log;
  const RunShape* shape = a ? run.shape(a->shape) : nullptr;
  if (metrics.epochs.empty() && shape) metrics = pattern_metrics(*shape, a->job_id, &pattern_log);
  ReportRow row = make_report_row(run, a, job, &metrics, now);
  if (!pattern_log.empty()) row.metrics_path = pattern_log;
  if (job && shape)
    if (auto f = explain_failure(*shape, *job, states, slurm, &nodes)) row.failure = describe_failure(*f);
  // The checkpoint folder its jobs were given (DDPCTL_CHECKPOINT_DIR), and
  // whether anything is in it.
  try {
    row.checkpoint = run_checkpoint_folder(run);
  } catch (const std::exception&) {  // no script: an old or damaged record
  }
  if (!row.checkpoint.empty()) {
    std::error_code ec;
    row.checkpoint_saved = fs::is_directory(row.checkpoint, ec) && !fs::is_empty(row.checkpoint, ec);
  }
  // The agent's samples, read once: the usage columns and each rank's account.
  std::map<std::string, std::vector<UsageSample>> samples;
  if (shape) {
    samples = read_usage(log_base(*shape, a->job_id));
    add_usage(row, log_base(*shape, a->job_id), samples);
    row.provenance = read_latest_provenance(log_base(*shape, a->job_id));
    if (auto slow = read_slow_record(log_base(*shape, a->job_id))) row.slow = describe_slow_history(*slow);
    InJobHistory h = read_in_job_history(log_base(*shape, a->job_id));
    row.in_job = h.restarts;
    row.in_job_lost_s = h.lost_s;
    row.shrunk = h.shrunk_to;
    // The figure its fabric check judged it by (its latest attempt's that has one).
    for (int at = job ? job->requeues : 0; at >= 0 && !row.busbw_gbs; --at)
      if (auto f = read_fabric_record(log_base(*shape, a->job_id), at); f && f->expected_gbs > 0)
        row.busbw_gbs = f->expected_gbs;
  }
  if (job && shape && is_terminal(job->state) && !job->array_task_id) {
    // Every attempt as the ledger recorded its end (sacct's), else sacct now.
    std::vector<Job> attempts;
    if (auto e = states.ends.find(job->id); e != states.ends.end() && e->second.job.start_time) {
      attempts = e->second.earlier;
      attempts.push_back(e->second.job);
    } else {
      attempts = slurm.attempts(job->id).jobs;
    }
    if (!attempts.empty()) {
      UsageAccount acc = account_usage(attempt_facts(log_base(*shape, a->job_id), row.metrics_path, attempts), shape->nodes);
      const Job& last = attempts.back();
      add_usage_notes(acc, {row.gpu_util_mean, row.cpu_pct_mean, row.rss_peak_bytes, last.mem_mib, last.cpus});
      acc.mfu = row.mfu;
      acc.mfu_words = row.mfu_words;
      RankFacts rf{row.world(), row.ranks_per_node, row.gpus_per_node, {}};
      if (!metrics.epochs.empty()) rf.peak_mem_mib = metrics.epochs.back().peak_mem_mib;
      if (!metrics.epochs.empty() && metrics.epochs.back().world_size > 0) rf.world = metrics.epochs.back().world_size;
      account_ranks(acc, samples, rf);
      if (acc.attempts > 0) row.account = acc;
    }
  }
  if (job && shape && (job->requeues > 0 || latest_logged_attempt(log_base(*shape, a->job_id)) > 0)) {
    RequeueHistory rq = requeue_history(*shape, *job, StatusExtras(slurm, states).earlier(*job));
    row.requeues = rq.requeues;
    row.preemptions = rq.preemptions;
    row.requeue_lost_s = rq.lost_s;
    row.requeue_ran_s = rq.ran_s;
  }
  return row;
}

void finish_report_rows(std::vector<ReportRow>& rows) {
  // Without metrics, the usage columns, or Slurm's times and what they
  // cost, still say something of any program.
  bool any = std::any_of(rows.begin(), rows.end(), [](const ReportRow& r) {
    return r.has_metrics || r.rss_peak_bytes.has_value() || r.wall_s.has_value();
  });
  if (!any) {
    std::vector<std::string> where;
    for (const auto& r : rows) where.push_back(r.metrics_path.empty() ? r.run_id + ": no job" : r.metrics_path);
    throw UserError(fmt::format("no metrics in any of the runs yet (the bundled trainer writes one line per epoch "
                                "to $DDPCTL_METRICS_FILE; another program's log is read through the spec's progress: section): {}",
                                join(where, ", ")));
  }
  compute_scaling(rows);
  compare_comm_floors(rows);
}

}  // namespace ddpctl
