#include "submit.hpp"

#include <algorithm>
#include <ctime>
#include <fmt/format.h>

#include "text.hpp"

namespace ddpctl {

namespace {

bool has(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

long long min_job_age_s(SlurmClient& slurm) {
  auto config = slurm.config();
  auto it = config.find("MinJobAge");
  if (it == config.end()) return 300;  // Slurm's default
  return std::atoll(it->second.c_str());
}

}  // namespace

Diagnostics preflight(const ResolvedRun& run, size_t shape_index, SlurmClient& slurm) {
  Diagnostics diags;
  const ResolvedShape& shape = run.shapes.at(shape_index);
  const Shape& asked = run.spec.shapes.at(shape_index);
  auto where = [&](const char* field) { return asked.where_of(field, Location{run.spec.file}); };

  NodeQuery q = slurm.nodes();
  if (!q.answered) {
    diags.error(Location{"sinfo"}, "", "cannot ask Slurm about its nodes (" + q.error + "); use --no-preflight to submit anyway");
    return diags;
  }
  const Partition* profile_partition = run.profile.find_partition(shape.partition);
  bool check_partition = !shape.partition.empty() && !(profile_partition && profile_partition->implicit);
  std::vector<const NodeInfo*> candidates;
  std::vector<std::string> partitions;
  for (const auto& node : q.nodes) {
    for (const auto& p : node.partitions)
      if (!has(partitions, p)) partitions.push_back(p);
    if (!check_partition || has(node.partitions, shape.partition)) candidates.push_back(&node);
  }
  if (check_partition && candidates.empty()) {
    diags.error(where("partition"), asked.field("partition"),
                fmt::format("partition {} does not exist on this cluster{}; Slurm has: {}", shape.partition,
                            did_you_mean(shape.partition, partitions), join(partitions, ", ")));
    return diags;
  }
  std::string in = check_partition ? "partition " + shape.partition : "this cluster";

  // The GPU type as Slurm names it: a GRES type, or a node feature.
  std::string gres_type, feature;
  if (!asked.gpu_type.empty()) {
    const GpuType* t = run.profile.find_gpu_type(asked.gpu_type);
    if (run.profile.dialect == GpuDialect::Constraint)
      feature = t ? t->constraint : asked.gpu_type;
    else if (run.profile.dialect != GpuDialect::Partition)
      gres_type = t ? t->gres : asked.gpu_type;
  }
  int cpus_needed = shape.tasks_per_node * shape.cpus_per_task.value_or(1);
  int fitting = 0, most_gpus = 0, most_cpus = 0;
  for (const NodeInfo* node : candidates) {
    int gpus = gres_type.empty() ? node->total_gpus()
                                 : (node->gpus_by_type.count(gres_type) ? node->gpus_by_type.at(gres_type) : 0);
    if (!feature.empty() && !has(node->features, feature)) gpus = 0;
    most_gpus = std::max(most_gpus, gpus);
    most_cpus = std::max(most_cpus, node->cpus);
    if (gpus >= shape.gpus_per_node && node->cpus >= cpus_needed) ++fitting;
  }
  std::string kind = gres_type.empty() ? (feature.empty() ? "" : feature + " ") : gres_type + " ";
  if (shape.gpus_per_node > 0 && most_gpus < shape.gpus_per_node) {
    diags.error(where("gpus_per_node"), asked.field("gpus_per_node"),
                most_gpus == 0 ? fmt::format("no node in {} has {}GPUs", in, kind)
                               : fmt::format("{} {}GPUs per node asked, but nodes in {} have at most {}",
                                             shape.gpus_per_node, kind, in, most_gpus));
  } else if (most_cpus < cpus_needed) {
    diags.error(where("cpus_per_task"), asked.field("cpus_per_task"),
                fmt::format("{} CPUs per node needed ({} task(s) x {}), but nodes in {} have at most {}", cpus_needed,
                            shape.tasks_per_node, shape.cpus_per_task.value_or(1), in, most_cpus));
  } else if (fitting < shape.nodes) {
    diags.error(where("nodes"), asked.field("nodes"),
                fmt::format("{} nodes asked, but {} has {} that fit this shape", shape.nodes, in, fitting));
  }

  if (!asked.account.empty()) {
    if (auto accounts = slurm.user_accounts(); accounts && !has(*accounts, asked.account))
      diags.error(where("account"), asked.field("account"),
                  fmt::format("account {} is not one you can charge on this cluster{}; yours: {}", asked.account,
                              did_you_mean(asked.account, *accounts), join(*accounts, ", ")));
  }
  return diags;
}

Lookup find_job_by_token(SlurmClient& slurm, const std::string& token, long long intent_time) {
  Lookup out;
  const std::string comment = job_comment(token);
  JobQuery queue = slurm.queue();
  if (queue.answered) {
    for (const auto& job : queue.jobs)
      if (job.comment == comment) {
        out.presence = Presence::Found;
        out.job = job;
        return out;
      }
  }
  JobQuery acct = slurm.accounting({}, intent_time - 120);
  if (acct.answered) {
    bool comments_kept = false;
    for (const auto& job : acct.jobs) {
      if (!job.comment.empty()) comments_kept = true;
      if (job.comment == comment) {
        out.presence = Presence::Found;
        out.job = job;
        return out;
      }
    }
    // sacct only proves absence where it stores comments (AccountingStoreFlags=job_comment).
    if (comments_kept && queue.answered) {
      out.presence = Presence::Absent;
      return out;
    }
  }
  if (queue.answered) {
    // squeue keeps every job for MinJobAge after it ends: within that window
    // its silence is proof.
    long long age = static_cast<long long>(std::time(nullptr)) - intent_time;
    if (age >= 0 && age + 5 < min_job_age_s(slurm)) {
      out.presence = Presence::Absent;
      return out;
    }
    out.why = "squeue does not show it, but the attempt is older than MinJobAge and sacct cannot tell";
    return out;
  }
  out.why = "Slurm could not be asked: " + queue.error;
  return out;
}

std::vector<Attempt> settle_attempts(Run& run, SlurmClient& slurm) {
  std::vector<Attempt> unsettled;
  bool changed = false;
  for (auto& a : run.attempts) {
    if (a.settled()) continue;
    Lookup l = find_job_by_token(slurm, a.token, parse_utc_iso(a.intent_at));
    if (l.presence == Presence::Found) {
      a.outcome = "submitted";
      a.job_id = l.job.id;
      a.reason = "confirmed by looking up its token in " + l.job.source;
    } else if (l.presence == Presence::Absent) {
      a.outcome = "absent";
      a.reason = "Slurm has no job with its token";
    } else {
      a.reason = l.why;
      unsettled.push_back(a);
      continue;
    }
    a.decided_at = utc_now_iso();
    changed = true;
  }
  if (changed) save_ledger(run);
  return unsettled;
}

std::vector<std::string> sbatch_args(const Run& run, const RunShape& shape, const std::string& token,
                                     const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"--comment=" + job_comment(token), "--chdir=" + run.cwd};
  args.insert(args.end(), extra.begin(), extra.end());
  args.push_back(run.dir + "/" + shape.script);
  return args;
}

Attempt submit_attempt(Run& run, const RunShape& shape, SlurmClient& slurm, const std::vector<std::string>& extra) {
  Attempt a;
  a.token = new_token();
  a.shape = shape.label;
  a.script = shape.script;
  std::vector<std::string> args = sbatch_args(run, shape, a.token, extra);
  a.argv = {"sbatch", "--parsable"};
  a.argv.insert(a.argv.end(), args.begin(), args.end());
  a.intent_at = utc_now_iso();
  run.attempts.push_back(a);
  save_ledger(run);  // the intent, before anything can happen

  SubmitResult r = slurm.submit(args);
  Attempt& rec = run.attempts.back();
  rec.decided_at = utc_now_iso();
  rec.reason = r.reason;
  switch (r.kind) {
    case SubmitResult::Kind::Submitted:
      rec.outcome = "submitted";
      rec.job_id = r.job_id;
      rec.cluster = r.cluster;
      break;
    case SubmitResult::Kind::Rejected:
      rec.outcome = "rejected";
      break;
    case SubmitResult::Kind::Unconfirmed:
      rec.outcome = "unconfirmed";
      break;
  }
  save_ledger(run);  // the outcome
  if (rec.outcome == "unconfirmed") {
    // Only a sighting settles it now: a controller that timed out may still be
    // creating the job, so absence is judged later, by the next `submit`.
    Lookup l = find_job_by_token(slurm, rec.token, parse_utc_iso(rec.intent_at));
    if (l.presence == Presence::Found) {
      rec.outcome = "submitted";
      rec.job_id = l.job.id;
      rec.reason = "sbatch's answer was lost (" + rec.reason + "); found by its token in " + l.job.source;
      rec.decided_at = utc_now_iso();
      save_ledger(run);
    }
  }
  return run.attempts.back();
}

}  // namespace ddpctl
