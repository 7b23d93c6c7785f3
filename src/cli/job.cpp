// ddpctl job sample|watch|check|checked|step-ended|step-started|stacks|python-hook|environment|requeue: the job
// agent, which the sbatch script runs on the compute nodes while the job runs
// (docs/running.md); hidden from the command list. What each does is in the
// core (job_agent.hpp); here: its options, the call, and what it prints.
#include <algorithm>
#include <csignal>
#include <fmt/format.h>
#include <filesystem>
#include <iostream>
#include <memory>
#include <sys/prctl.h>
#include <unistd.h>

#include "cli/app.hpp"
#include "agent/job_agent.hpp"
#include "agent/fabric_check.hpp"
#include "runs/job_contract.hpp"
#include "agent/stacks_hook.hpp"
#include "base/paths.hpp"
#include "base/text.hpp"

namespace ddpctl::cli {

namespace {

CLI::Option* add_log_base(CLI::App* c, std::string& log_base) {
  return c->add_option("--log-base", log_base, "<output_dir>/<job name>_<job id>")->required();
}

void setup_sample(CLI::App* job, Context& ctx) {
  struct O {
    SampleOptions so;
    std::string interval = "5";
  };
  auto o = std::make_shared<O>();
  CLI::App* c = job->add_subcommand("sample", "Sample the job's CPU, memory and GPUs on this node");
  add_log_base(c, o->so.log_base);
  c->add_option("--interval", o->interval, "Seconds between samples (5s)");
  c->add_option("--count", o->so.count, "Stop after this many samples (0: until killed)");
  c->add_option("--proc", o->so.proc_root, "The proc file system (tests)");
  c->add_option("--parent", o->so.parent_pid,
                "The pid of the process that starts it (the step's task, before its exec): it ends when that one has");
  c->callback([o, &ctx] {
    o->so.interval_s = agent_seconds(o->interval, "--interval");
    o->so.ticks_per_s = ::sysconf(_SC_CLK_TCK);
    o->so.page_size = ::sysconf(_SC_PAGESIZE);
    // Started in the background by the step's task: it ends with the task.
    // The signal comes only if the task is still its parent when it is asked
    // for (a program that ends at once is gone before ddpctl has started), so
    // the sampler also checks --parent, at once and between samples.
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    run_sampler(o->so, ctx);
  });
}

void setup_watch(CLI::App* job, Context& ctx) {
  struct O {
    WatchOptions w;
    std::string stall_after = "30m", action = "warn", interval = "5", nodes, pattern,
                slow_after = std::to_string(WatchdogSettings::kSlowAfterDefault);
    int epoch_base = 1;
  };
  auto o = std::make_shared<O>();
  CLI::App* c = job->add_subcommand("watch", "Watch the training step for a stall and act on it");
  add_log_base(c, o->w.log_base);
  c->add_option("--stall-after", o->stall_after, "No progress for this long is a stall (30m, watchdog.stall_after's default)");
  std::vector<std::string> actions;
  for (StallAction a : stall_actions()) actions.push_back(stall_action_name(a));
  c->add_option("--action", o->action, "warn, cancel, requeue or restart (in-job)")->check(CLI::IsMember(actions));
  c->add_option("--interval", o->interval, "Seconds between observations (5)");
  c->add_option("--nodes", o->nodes, "The job's nodes, space-separated, in order")->required();
  c->add_option("--tasks", o->w.tasks, "Tasks of the training step");
  c->add_option("--tasks-per-node", o->w.tasks_per_node, "Tasks per node");
  c->add_flag("--per-gpu", o->w.per_gpu, "A task is a rank");
  c->add_option("--max-restarts", o->w.max_requeues, "requeue.max_restarts");
  c->add_option("--pattern", o->pattern, "The progress pattern (named groups epoch, step)");
  c->add_option("--epoch-base", o->epoch_base, "progress.epoch_base");
  c->add_option("--step-pid", o->w.step_pid, "The training step's process: the watch ends with it");
  c->add_option("--slow-after", o->slow_after, "A rank below 0.7x the others this long is slow (5m)");
  c->add_flag("--exclude-slow", o->w.exclude_slow, "Leave the slow ranks' nodes out of the watchdog's requeue");
  c->add_option("--race-run", o->w.race_run, "A raced run's folder: its requeue races the group again first (race-again)");
  c->callback([o, &ctx] {
    o->w.race_program = executable_path();
    o->w.nodes = split_ws(o->nodes);
    o->w.stall_after_s = agent_seconds(o->stall_after, "--stall-after");
    o->w.interval_s = agent_seconds(o->interval, "--interval");
    o->w.slow_after_s = agent_seconds(o->slow_after, "--slow-after");
    o->w.action = parse_stall_action(o->action).value_or(StallAction::Warn);  // --action's check refused the rest
    if (!o->pattern.empty()) {
      o->w.progress = ProgressSpec{};
      o->w.progress->pattern = o->pattern;
      o->w.progress->epoch_base = o->epoch_base;
    }
    o->w.stacks_wait_s = o->w.interval_s + stacks_budget(ctx.env) + 3;  // a sample's sleep, the dumps' budget, slack
    run_watch(o->w, ctx);
  });
}

void setup_check(CLI::App* job, Context& ctx) {
  struct O {
    NodeCheckRequest q;
    std::string deadline = "10";
  };
  auto o = std::make_shared<O>();
  CLI::App* c = job->add_subcommand("check", "Check this node before training: GPUs, rendezvous port, free memory");
  add_log_base(c, o->q.log_base);
  c->add_option("--master-addr", o->q.master_addr, "MASTER_ADDR")->required();
  c->add_option("--master-port", o->q.master_port, "MASTER_PORT")->required();
  c->add_option("--master-host", o->q.master_host, "The first node's name")->required();
  c->add_option("--interface", o->q.interface, "master.interface, for messages");
  c->add_option("--nodes", o->q.nodes, "The job's node count");
  c->add_option("--gpus", o->q.gpus, "GPUs expected on this node (default: SLURM_GPUS_ON_NODE)");
  c->add_option("--min-free-mib", o->q.min_free_mib, "Free memory needed (default: half of SLURM_MEM_PER_NODE, else 256)");
  c->add_option("--deadline", o->deadline, "Seconds for the whole check (10)");
  c->callback([o, &ctx] {
    o->q.deadline_s = agent_seconds(o->deadline, "--deadline");
    NodeCheckResult r = run_node_check(o->q, ctx);
    for (const auto& p : r.problems) std::cerr << "ddpctl: node check: " << p.text << '\n';
    if (!r.ok) throw CLI::RuntimeError(verdict_status(AgentVerdict::Fail));
  });
}

void setup_checked(CLI::App* job, Context& ctx) {
  struct O {
    std::string log_base, nodes;
    int max_requeues = 0;
  };
  auto o = std::make_shared<O>();
  CLI::App* c = job->add_subcommand(
      "checked", fmt::format("Read every node's check: {} go on, {} requeue without the nodes printed, {} fail",
                             verdict_status(AgentVerdict::Go), verdict_status(AgentVerdict::Requeue), verdict_status(AgentVerdict::Fail)));
  add_log_base(c, o->log_base);
  c->add_option("--nodes", o->nodes, "The job's nodes, space-separated")->required();
  c->add_option("--max-restarts", o->max_requeues, "requeue.max_restarts (0: no requeue)");
  c->callback([o, &ctx] {
    CheckDecision d = read_node_checks(o->log_base, split_ws(o->nodes), o->max_requeues, ctx);
    AgentVerdict v = check_verdict(d);
    for (const auto& l : d.lines) (v == AgentVerdict::Go ? std::cout : std::cerr) << "ddpctl: node check: " << l << '\n';
    // To requeue: the nodes to exclude, then the first problem (the requeue's reason).
    if (v == AgentVerdict::Requeue) std::cout << checked_requeue_lines(d.bad_nodes, d.lines.empty() ? "" : d.lines.front());
    if (v != AgentVerdict::Go) throw CLI::RuntimeError(verdict_status(v));
  });
}

void setup_fabric(CLI::App* job, Context& ctx) {
  struct O {
    FabricCheckRequest q;
    std::string nodes, timeout = "60";
  };
  auto o = std::make_shared<O>();
  CLI::App* c = job->add_subcommand(
      "fabric", "Time the all-reduce across the allocation, bisect to a slow node or link, record what to exclude");
  add_log_base(c, o->q.log_base);
  c->add_option("--nodes", o->nodes, "The allocation's nodes (spares too), space-separated, in Slurm's order")->required();
  c->add_option("--master-addr", o->q.master_addr, "The first node's address")->required();
  c->add_option("--master-port", o->q.master_port, "A free port on the first node")->required();
  c->add_option("--expected", o->q.expected_gbs, "The partition's busbw_gbs")->required()->check(CLI::PositiveNumber);
  c->add_option("--warn-below", o->q.warn_below, "A fraction of --expected: below it, a warning");
  c->add_option("--fail-below", o->q.fail_below, "A fraction of --expected: below it, bisection and exclusion");
  c->add_option("--size", o->q.size, "The size judged (64M)");
  c->add_option("--iters", o->q.iters, "All-reduces timed per measurement");
  c->add_option("--timeout", o->timeout, "Each measurement's bound (60s)");
  c->add_option("--trainer", o->q.trainer, "ddp-train")->required();
  c->add_option("--tasks-per-node", o->q.tasks_per_node, "Ranks per node (the node's GPUs; 1 on CPUs)");
  c->add_flag("--gpus", o->q.gpus, "NCCL on the GPUs (else Gloo on the CPUs)");
  c->callback([o, &ctx] {
    o->q.nodes = split_ws(o->nodes);
    o->q.timeout_s = agent_seconds(o->timeout, "--timeout");
    if (auto said = fabric_check_once(o->q, ctx)) std::cout << "ddpctl: fabric check: " << *said << '\n';
  });
}

void setup_step_ended(CLI::App* job, Context& ctx) {
  struct O {
    StepEndedOptions so;
    std::string nodes, spares;
  };
  auto o = std::make_shared<O>();
  CLI::App* c = job->add_subcommand(
      "step-ended", fmt::format("The training step failed: {} start it again on the nodes printed, {} requeue without the nodes printed, {} fail",
                                verdict_status(AgentVerdict::Go), verdict_status(AgentVerdict::Requeue), verdict_status(AgentVerdict::Fail)));
  add_log_base(c, o->so.log_base);
  c->add_option("--nodes", o->nodes, "The step's nodes, space-separated, in order")->required();
  c->add_option("--spares", o->spares, "The allocation's unused nodes, space-separated");
  c->add_option("--restarts-done", o->so.restarts_done, "In-job restarts so far in this attempt");
  c->add_option("--in-job", o->so.max_in_job, "restart.in_job")->required();
  c->add_option("--max-restarts", o->so.max_requeues, "requeue.max_restarts (0: no requeue)");
  c->add_option("--full-nodes", o->so.full_nodes, "The shape's nodes (the step's size before any shrink)");
  c->add_option("--min-nodes", o->so.min_nodes, "restart.min_nodes: the fewest nodes a restarted step may shrink to (0: none)");
  c->add_option("--rc", o->so.step_rc, "The step's exit status")->required();
  c->add_flag("--tasks-are-ranks", o->so.tasks_are_ranks, "A task's number is its rank");
  c->add_flag("--check-failed", o->so.check_failed, "The node check before the step failed");
  c->callback([o, &ctx] {
    o->so.nodes = split_ws(o->nodes);
    o->so.spares = split_ws(o->spares);
    RestartDecision d = on_step_ended(o->so, ctx);
    // For the batch shell (launch.sh): one `key value` line each (job_contract.hpp).
    switch (d.verdict) {
      case AgentVerdict::Go:
        std::cerr << fmt::format("ddpctl: restart {} of {} in the job: {}\n", o->so.restarts_done + 1, o->so.max_in_job, d.text);
        std::cout << step_ended_line(StepEndedKey::Nodes, join(d.nodes, " ")) << step_ended_line(StepEndedKey::Spares, join(d.spares, " "));
        break;
      case AgentVerdict::Requeue:
        std::cout << step_ended_line(StepEndedKey::Exclude, join(d.exclude, ","));
        if (d.stopped_for_requeue) std::cout << step_ended_line(StepEndedKey::Stopped, "1");
        break;
      case AgentVerdict::Fail:
        std::cerr << "ddpctl: error: no in-job restart: " << d.text << '\n';
        break;
    }
    std::cout << step_ended_line(StepEndedKey::Why, d.text);
    if (d.verdict != AgentVerdict::Go) throw CLI::RuntimeError(verdict_status(d.verdict));
  });
  auto number = std::make_shared<int>(0);
  auto log_base = std::make_shared<std::string>();
  CLI::App* started = job->add_subcommand("step-started", "Record that an in-job restart's step started");
  add_log_base(started, *log_base);
  started->add_option("--restart", *number, "The in-job restart's number (1-based)")->required();
  started->callback([number, log_base, &ctx] { on_step_started(*log_base, *number, ctx); });
}

void setup_stacks(CLI::App* job, Context& ctx) {
  struct O {
    std::string log_base, proc = "/proc";
    double budget = kStacksBudgetS;
  };
  auto o = std::make_shared<O>();
  // By hand (`srun --overlap --jobid ID ddpctl job stacks ...`); in a job, the watchdog asks each node's sampler.
  CLI::App* c = job->add_subcommand("stacks", "Record the stacks of the job's training processes on this node");
  add_log_base(c, o->log_base);
  c->add_option("--budget", o->budget, fmt::format("Seconds for the dumps ({:g})", kStacksBudgetS));
  c->add_option("--proc", o->proc, "The proc file system (tests)");
  c->callback([o, &ctx] { std::cout << record_stacks(o->log_base, o->proc, o->budget, ctx) << '\n'; });
}

void setup_python_hook(CLI::App* job, Context&) {
  auto log_base = std::make_shared<std::string>();
  // The script puts the folder it prints first on the job's PYTHONPATH.
  CLI::App* c = job->add_subcommand("python-hook", "Write the sitecustomize that lets Python ranks dump their stacks; print its folder");
  add_log_base(c, *log_base);
  c->callback([log_base] { std::cout << write_python_hook(*log_base) << '\n'; });
}

// `job environment`: the attempt's provenance (the subcommand keeps its first
// name: the scripts of jobs already queued call it).
void setup_provenance(CLI::App* job, Context& ctx) {
  struct O {
    ProvenanceOptions po;
    std::string log_base, nodes, env;
  };
  auto o = std::make_shared<O>();
  CLI::App* c = job->add_subcommand("environment", "Record what this attempt runs with: program, versions, modules, environment");
  add_log_base(c, o->log_base);
  c->add_option("--nodes", o->nodes, "The job's nodes, space-separated, in order")->required();
  c->add_option("--env", o->env, "The variables ddpctl set, space-separated");
  c->add_option("--container", o->po.container, "The container runtime the program runs in");
  c->add_option("--container-image", o->po.image, "Its image");
  c->add_option("--container-words", o->po.container_words, "How many of the command's first words start the container");
  c->add_option("command", o->po.argv, "The launch command, after --")->required();
  c->callback([o, &ctx] {
    o->po.nodes = split_ws(o->nodes);
    o->po.env_names = split_ws(o->env);
    std::error_code ec;
    o->po.cwd = std::filesystem::current_path(ec).string();
    record_provenance(o->log_base, o->po, ctx);
  });
}

void setup_requeue(CLI::App* job, Context& ctx) {
  auto exclude = std::make_shared<std::string>(), slow_of = std::make_shared<std::string>();
  CLI::App* c = job->add_subcommand("requeue", "Requeue this job, excluding nodes");
  c->add_option("--exclude", *exclude, "Nodes to exclude, comma-separated");
  c->add_option("--slow-of", *slow_of, "A log base: also exclude the nodes its slow ranks' record names (watchdog.exclude_slow)");
  c->callback([exclude, slow_of, &ctx] {
    // Requeuing signals this job's processes, this one included; it
    // finishes what it started within Slurm's KillWait.
    std::signal(SIGTERM, SIG_IGN);
    JobPlace place = job_place(ctx.env);
    std::vector<std::string> nodes;
    for (const auto& n : split(*exclude, ','))
      if (!n.empty()) nodes.push_back(n);
    if (!slow_of->empty()) {
      std::string why_slow;
      std::vector<std::string> slow = recorded_slow_nodes(*slow_of, place.attempt, &why_slow);
      if (!slow.empty()) std::cerr << "ddpctl: requeue: excluding " << join(slow, ", ") << ": slow: " << why_slow << '\n';
      for (const auto& n : slow)
        if (std::find(nodes.begin(), nodes.end(), n) == nodes.end()) nodes.push_back(n);
    }
    std::optional<std::string> why = requeue_job(ctx.runner, place.slurm_id, nodes);
    if (!nodes.empty() && (!why || why->rfind("the nodes could not", 0) != 0))
      job_event(job_event_source(ctx.env), EventType::NodeExcluded, {{"nodes", nodes}, {"reason", "left out of the requeued job"}});
    if (why) {
      std::cerr << "ddpctl: requeue: " << *why << '\n';
      throw CLI::RuntimeError(1);
    }
  });
}

void setup_event(CLI::App* job, Context& ctx) {
  auto type = std::make_shared<std::string>();
  auto words = std::make_shared<std::vector<std::string>>();
  CLI::App* c = job->add_subcommand("event", "Write an event of the job's run (the job script's own: a race's claim, a requeue)");
  c->add_option("type", *type, "The event's type (docs/json.md \"Events\")")->required();
  c->add_option("fields", *words, "KEY=VALUE words: the event's fields");
  c->callback([type, words, &ctx] { job_event_from_words(ctx.env, *type, *words); });
}

}  // namespace

void setup_job(CLI::App& app, Context& ctx) {
  CLI::App* job = app.add_subcommand("job", "The job agent, run by the sbatch script on the compute nodes");
  job->group("");
  job->require_subcommand(1);
  for (auto setup : {setup_sample, setup_watch, setup_check, setup_checked, setup_fabric, setup_step_ended, setup_stacks, setup_python_hook, setup_provenance,
                     setup_requeue, setup_event})
    setup(job, ctx);
}

}  // namespace ddpctl::cli
