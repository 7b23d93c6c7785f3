#include "agent/job_acts.hpp"

#include <algorithm>
#include <chrono>
#include <fmt/format.h>
#include <iostream>

#include "agent/node_check.hpp"
#include "base/text.hpp"

namespace ddpctl {

std::string newest_step(const std::string& squeue_steps) {
  std::string best;
  long best_n = -1;
  for (const auto& line : split(squeue_steps, '\n')) {
    std::string id = trim(line);
    size_t dot = id.rfind('.');
    if (dot == std::string::npos || dot + 1 >= id.size()) continue;
    std::string n = id.substr(dot + 1);
    if (!std::all_of(n.begin(), n.end(), [](char c) { return c >= '0' && c <= '9'; }) || n.size() > 9) continue;
    if (long v = std::stol(n); v > best_n) best_n = v, best = id;
  }
  return best;
}

std::optional<std::string> end_training_step(CommandRunner& runner, const std::string& job_id, std::string* step) {
  CommandResult q = runner.run({"squeue", "-h", "-s", "-j", job_id, "-o", "%i"}, std::chrono::seconds(20));
  if (!q.ok()) return "squeue -s: " + q.describe();
  *step = newest_step(q.out);
  if (step->empty()) return fmt::format("squeue -s lists no step of job {}", job_id);
  CommandResult c = runner.run({"scancel", "--signal=KILL", *step}, std::chrono::seconds(30));
  if (!c.ok()) return "scancel --signal=KILL " + *step + ": " + c.describe();
  return std::nullopt;
}

std::optional<std::string> requeue_job(CommandRunner& runner, const std::string& job_id,
                                       const std::vector<std::string>& exclude) {
  auto scontrol = [&](std::vector<std::string> args) {
    args.insert(args.begin(), "scontrol");
    // Within Slurm's KillWait (30 s by default) for the whole sequence.
    return runner.run(args, std::chrono::seconds(8));
  };
  if (exclude.empty()) {
    CommandResult r = scontrol({"requeue", job_id});
    return r.ok() ? std::nullopt : std::optional<std::string>(r.describe());
  }
  CommandResult hold = scontrol({"requeuehold", job_id});
  if (!hold.ok()) {
    CommandResult r = scontrol({"requeue", job_id});
    return r.ok() ? std::optional<std::string>("the nodes could not be excluded (" + hold.describe() + ")")
                  : std::optional<std::string>(r.describe());
  }
  std::optional<std::string> problem = exclude_nodes(runner, job_id, exclude);
  CommandResult release = scontrol({"release", job_id});
  if (!release.ok()) release = scontrol({"release", job_id});
  if (!release.ok()) return "scontrol release failed: " + release.describe() + "; release the job by hand";
  return problem;
}

std::optional<std::string> race_again_before_requeue(CommandRunner& runner, const std::string& program,
                                                     const std::string& run_dir, const std::string& job_id,
                                                     const std::string& why, const std::vector<std::string>& leave_out) {
  std::vector<std::string> argv = {program, "race-again", run_dir, "--requeuing", job_id, "--because", why};
  if (!leave_out.empty()) argv.insert(argv.end(), {"--leave-out", join(leave_out, ",")});
  CommandResult r = runner.run(argv, std::chrono::seconds(60));
  std::cerr << r.out << r.err;
  if (!r.ok()) return r.describe();
  return std::nullopt;
}

}  // namespace ddpctl
