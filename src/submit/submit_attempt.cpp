#include "submit/submit_attempt.hpp"

#include <algorithm>
#include <ctime>
#include <fmt/format.h>
#include <unistd.h>

#include "base/lock.hpp"
#include "base/text.hpp"
#include "runs/events.hpp"
#include "runs/job_states.hpp"
#include "runs/run_json.hpp"
#include "runs/snapshot_record.hpp"

namespace ddpctl {

namespace {

long long min_job_age_s(SlurmClient& slurm) {
  auto config = slurm.config();
  auto it = config.find("MinJobAge");
  if (it == config.end()) return 300;  // Slurm's default
  return std::atoll(it->second.c_str());
}

}  // namespace

Lookup find_job_by_token(SlurmClient& slurm, const std::string& token, long long intent_time) {
  Lookup out;
  JobQuery queue = slurm.queue();
  if (queue.answered) {
    for (const auto& job : queue.jobs)
      if (comment_has_token(job.comment, token)) {
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
      if (comment_has_token(job.comment, token)) {
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
  std::vector<Attempt> decided;
  for (const auto& attempt : run.attempts) {
    if (attempt.settled()) continue;
    Attempt a = attempt;
    // Its own ddpctl still runs here: its sbatch may still submit, so it is
    // in flight, never absent (that ddpctl records the outcome itself).
    if (a.pid != getpid() && process_alive_here(a.pid, a.host)) {
      a.reason = fmt::format("ddpctl {} is still submitting it", a.pid);
      unsettled.push_back(a);
      continue;
    }
    Lookup l = find_job_by_token(slurm, a.token, parse_utc_iso(a.intent_at));
    if (l.presence == Presence::Found) {
      a.outcome = Outcome::Submitted;
      a.job_id = submission_id(l.job);
      a.reason = "confirmed by looking up its token in " + l.job.source;
    } else if (l.presence == Presence::Absent) {
      a.outcome = Outcome::Absent;
      a.reason = "Slurm has no job with its token";
    } else {
      a.reason = l.why;
      unsettled.push_back(a);
      continue;
    }
    a.decided_at = utc_now_iso();
    decided.push_back(a);
  }
  if (!decided.empty()) {
    std::vector<Attempt> settled_here;
    update_ledger(run, [&](std::vector<Attempt>& attempts) {
      settled_here.clear();
      for (const auto& d : decided) {
        Attempt& rec = attempt_by_token(attempts, d.token);
        if (!rec.settled()) rec = d, settled_here.push_back(d);  // another ddpctl may have settled it meanwhile
      }
    });
    for (const auto& d : settled_here) try_append_event(run.dir, EventType::Submitted, answer_event_fields(d));
  }
  return unsettled;
}

int adopt_found_jobs(Run& run, const std::vector<Job>& queue) {
  std::vector<std::pair<std::string, Job>> found;
  for (const auto& a : run.attempts) {
    if (a.outcome == Outcome::Submitted || a.outcome == Outcome::Rejected) continue;
    // An array's records all carry its token: the first names the submission.
    for (const auto& job : queue)
      if (comment_has_token(job.comment, a.token)) {
        found.emplace_back(a.token, job);
        break;
      }
  }
  if (found.empty()) return 0;
  std::vector<Attempt> adopted;
  update_ledger(run, [&](std::vector<Attempt>& attempts) {
    adopted.clear();
    for (const auto& [token, job] : found) {
      Attempt& rec = attempt_by_token(attempts, token);
      if (rec.outcome == Outcome::Submitted) continue;
      rec.reason = fmt::format("{} ({}); its job appeared in {} later, found by its token", outcome_name(rec.outcome),
                               rec.reason, job.source);
      rec.outcome = Outcome::Submitted;
      rec.job_id = submission_id(job);
      rec.decided_at = utc_now_iso();
      adopted.push_back(rec);
    }
  });
  for (const auto& a : adopted) try_append_event(run.dir, EventType::Submitted, answer_event_fields(a));
  return static_cast<int>(found.size());
}

std::vector<std::string> sbatch_args(const Run& run, const RunShape& shape, const std::string& token,
                                     const std::vector<std::string>& extra) {
  // With a snapshot, the job works in the run's view of it (every attempt,
  // every shape of a race: the same one); else in the submit folder.
  std::string workdir = job_workdir(run.dir);
  std::vector<std::string> args = {"--comment=" + job_comment(token, shape.comment),
                                   "--chdir=" + (workdir.empty() ? run.cwd : workdir)};
  args.insert(args.end(), extra.begin(), extra.end());
  args.push_back(run.dir + "/" + shape.script);
  return args;
}

Attempt submit_attempt(Run& run, const RunShape& shape, SlurmClient& slurm, const std::vector<std::string>& extra,
                       const std::string& array, int array_offset, bool race) {
  Attempt a;
  a.token = new_token();
  a.array = array;
  a.race = race;
  a.array_offset = array_offset;
  a.shape = shape.label;
  a.script = shape.script;
  std::vector<std::string> args = sbatch_args(run, shape, a.token, extra);
  if (array_offset || race) args.push_back(std::to_string(array_offset));  // the array script's $1
  if (race) args.push_back("race");  // its $2: a raced grid's first cell runs its race script
  a.argv = {"sbatch", "--parsable"};
  a.argv.insert(a.argv.end(), args.begin(), args.end());
  a.intent_at = utc_now_iso();
  a.pid = getpid();
  a.host = host_name();
  auto record = [&run, &a] { update_ledger(run, [&a](std::vector<Attempt>& all) { attempt_by_token(all, a.token) = a; }); };
  record();  // the intent, before anything can happen
  try_append_event(run.dir, EventType::Submitting, answer_event_fields(a));

  SbatchResult r = slurm.submit(args);
  a.decided_at = utc_now_iso();
  a.reason = r.reason;
  switch (r.kind) {
    case SbatchResult::Kind::Submitted:
      a.outcome = Outcome::Submitted;
      a.job_id = r.job_id;
      a.cluster = r.cluster;
      break;
    case SbatchResult::Kind::Rejected:
      a.outcome = Outcome::Rejected;
      break;
    case SbatchResult::Kind::Unconfirmed:
      a.outcome = Outcome::Unconfirmed;
      break;
  }
  record();  // the outcome
  try_append_event(run.dir, EventType::Submitted, answer_event_fields(a));
  if (a.outcome == Outcome::Unconfirmed) {
    // Only a sighting settles it now: a controller that timed out may still be
    // creating the job, so absence is judged later, by the next `submit`.
    Lookup l = find_job_by_token(slurm, a.token, parse_utc_iso(a.intent_at));
    if (l.presence == Presence::Found) {
      a.outcome = Outcome::Submitted;
      a.job_id = submission_id(l.job);
      a.reason = "sbatch's answer was lost (" + a.reason + "); found by its token in " + l.job.source;
      a.decided_at = utc_now_iso();
      record();
      try_append_event(run.dir, EventType::Submitted, answer_event_fields(a));
    }
  }
  return a;
}

}  // namespace ddpctl
