#include "agent/job_sample.hpp"

#include <csignal>
#include <fmt/format.h>
#include <fstream>
#include <optional>
#include <signal.h>
#include <unistd.h>

#include "agent/job_events.hpp"
#include "agent/job_place.hpp"
#include "agent/job_stacks.hpp"
#include "agent/log_folder.hpp"
#include "agent/sampler.hpp"
#include "base/diagnostics.hpp"
#include "base/files.hpp"
#include "runs/job_files.hpp"
#include "runs/usage.hpp"

namespace ddpctl {

namespace {

volatile std::sig_atomic_t g_sigterm = 0;
void on_sigterm(int) { g_sigterm = 1; }

// SIGTERM noted (not dying of it) while the sampler runs; the old handler back after.
class SigtermNoted {
 public:
  explicit SigtermNoted(bool on) : on_(on) {
    if (!on_) return;
    g_sigterm = 0;
    struct sigaction sa = {};
    sa.sa_handler = on_sigterm;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGTERM, &sa, &old_);
  }
  ~SigtermNoted() {
    if (on_) ::sigaction(SIGTERM, &old_, nullptr);
  }
  SigtermNoted(const SigtermNoted&) = delete;
  SigtermNoted& operator=(const SigtermNoted&) = delete;

 private:
  bool on_;
  struct sigaction old_ = {};
};

// At SIGTERM: a preemption is an event of the run where Slurm says so
// (PreemptTime, Slurm 23.02 and on); a cancel or the time limit is not.
// DDPCTL_METRICS_FROM: the metrics file's size when the script started
// the step (-1: not said, or not a size).
long long metrics_from(const Environment& env) {
  const std::string v = env.value("DDPCTL_METRICS_FROM");
  if (v.empty() || v.size() > 18 || v.find_first_not_of("0123456789") != std::string::npos) return -1;
  return std::stoll(v);
}

void say_if_preempted(const JobEventSource& events, const JobPlace& place, Context& ctx) {
  if (events.run_dir.empty()) return;
  CommandResult r = ctx.runner.run({"scontrol", "show", "job", "-o", place.slurm_id}, std::chrono::seconds(5));
  const size_t at = r.out.find("PreemptTime=");
  if (!r.ok() || at == std::string::npos) return;
  const std::string when = r.out.substr(at + 12, r.out.find_first_of(" \n", at) - at - 12);
  if (when.empty() || when == "None" || when == "Unknown") return;
  job_event_once(events, preempted_once_key(events), EventType::Preempted,
                 {{"reason", "Slurm preempted the job at " + when + "; SIGTERM reached the training step"}});
}

}  // namespace

void run_sampler(const SampleOptions& o, Context& ctx) {
  // DDPCTL_PREEMPTED (agent.sh): written when Slurm's SIGTERM reaches the
  // step, for a program that polls a file rather than handling the signal.
  const std::string preempted = ctx.env.value("DDPCTL_PREEMPTED");
  SigtermNoted noted(!preempted.empty());
  JobPlace place = job_place(ctx.env);
  Sampler::Options so;
  so.proc_root = o.proc_root;
  so.node = place.node;
  so.job_id = place.job_id;
  so.cluster = place.cluster;
  so.conf = place.conf;
  so.attempt = place.attempt;
  so.cpus = place.cpus;
  so.ticks_per_s = o.ticks_per_s;
  so.page_size = o.page_size;
  so.gpu_indices = place.gpu_indices;
  so.mem_limit_bytes = place.mem_mib * 1024 * 1024;
  Sampler sampler(so, ctx.runner);
  std::string path = usage_path(o.log_base, so.node);
  std::string request = stacks_request_path(o.log_base, so.attempt);
  std::string stacks = stacks_path(o.log_base, so.attempt, so.node);
  double budget = stacks_budget(ctx.env);
  // The first node's sampler says what the training says (job_events.hpp).
  const JobEventSource events = job_event_source(ctx.env);
  const bool first_node = ctx.env.value("SLURM_NODEID", "0") == "0";
  std::optional<TrainingEvents> training;
  if (first_node && !events.run_dir.empty())
    training.emplace(events, TrainingFiles{ctx.env.value("DDPCTL_PROGRESS_FILE"), ctx.env.value("DDPCTL_METRICS_FILE"),
                                           job_files::step_log(o.log_base, so.attempt, 0),
                                           fmt::format("{}.{}.{}", place.slurm_id, so.attempt,
                                                       ctx.env.value("DDPCTL_RESTART", "0")),
                                           metrics_from(ctx.env)});
  double next = 0;
  for (int taken = 0; o.count == 0 || taken < o.count;) {
    if (g_sigterm) {
      write_file_atomic(preempted, fmt::format("{:.3f} SIGTERM from Slurm reached the training step on {}\n",
                                               ctx.clock.wall(), so.node));
      if (first_node) say_if_preempted(events, place, ctx);
      if (training) training->tick(ctx.clock.wall() + 1e9);  // the last metrics, and the progress, said
      return;
    }
    if (o.parent_pid > 0 && ::getppid() != o.parent_pid) {  // the program it sampled for has ended
      if (training) training->tick(ctx.clock.wall() + 1e9);
      return;
    }
    double now = ctx.clock.wall();
    if (training) training->tick(now);
    if (now >= next) {
      UsageSample s = sampler.take(now);
      std::ofstream out(path, std::ios::app);
      out << usage_sample_json(s).dump() << '\n';
      if (!out.flush()) throw UserError(Location{path}, "", "cannot append the sample");
      next = now + o.interval_s;
      taken++;
      revalidate_folder(o.log_base);  // on NFS: see the watchdog's request file soon
    }
    // The watchdog asks for the ranks' stacks before it cancels or requeues.
    if (::access(request.c_str(), F_OK) == 0 && ::access(stacks.c_str(), F_OK) != 0)
      write_file_atomic(stacks, dump_stacks(ctx.runner, ctx.clock, o.proc_root, {so.job_id, so.node, so.cluster, so.conf}, budget, o.log_base,
                                            ctx.env.value("TORCH_NCCL_DEBUG_INFO_PIPE_FILE")));
    if (o.count == 0 || taken < o.count) ctx.clock.sleep(0.5);
  }
}

}  // namespace ddpctl
