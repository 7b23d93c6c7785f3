// ddpctl job sample|watch|check|checked|stacks|requeue: the job agent. The
// sbatch script runs these on the compute nodes while the job runs
// (docs/running.md); they are hidden from the command list. Each reads
// Slurm's environment for the job, node and attempt.
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <iostream>
#include <memory>
#include <thread>
#include <sys/prctl.h>
#include <unistd.h>

#include "app.hpp"
#include "files.hpp"
#include "job_agent.hpp"
#include "job_environment.hpp"
#include "node_check.hpp"
#include "progress_pattern.hpp"
#include "text.hpp"
#include "sampler.hpp"
#include "usage.hpp"
#include "values.hpp"

namespace ddpctl::cli {

namespace {

std::string env(const char* name, const std::string& fallback = "") {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

int env_int(const char* name, int fallback) {
  std::string problem;
  auto v = parse_int(env(name), 0, 1 << 30, &problem);
  return v ? static_cast<int>(*v) : fallback;
}

std::string this_node() {
  std::string n = env("SLURMD_NODENAME");
  if (!n.empty()) return n;
  char host[256] = {0};
  ::gethostname(host, sizeof host - 1);
  std::string h = host;
  return h.substr(0, h.find('.'));
}

double wall_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string job_id_from_env() {
  std::string id = env("SLURM_JOB_ID");
  if (id.empty()) throw UserError(Location{"SLURM_JOB_ID"}, "", "ddpctl job runs inside a Slurm job (SLURM_JOB_ID is not set)");
  return id;
}

// "30s", "10m", "1h", or plain seconds: a spec's span (values.hpp).
double parse_seconds(const std::string& s, const std::string& option) {
  std::string problem;
  if (auto v = parse_span(s, &problem)) return static_cast<double>(*v);
  throw UserError(Location{option}, "", fmt::format("{} is not a duration (30s, 10m, 1h)", printable(s)));
}

std::vector<int> parse_gpu_list(const std::string& s) {
  std::vector<int> out;
  std::string problem;
  for (const auto& part : split(s, ',')) {
    size_t dash = part.find('-');
    if (dash != std::string::npos) {
      auto a = parse_int(part.substr(0, dash), 0, 4096, &problem), b = parse_int(part.substr(dash + 1), 0, 4096, &problem);
      if (a && b)
        for (long long i = *a; i <= *b; i++) out.push_back(static_cast<int>(i));
    } else if (auto v = parse_int(part, 0, 4096, &problem)) {
      out.push_back(static_cast<int>(*v));
    }
  }
  return out;
}

}  // namespace

void setup_job(CLI::App& app, Context& ctx) {
  CLI::App* job = app.add_subcommand("job", "The job agent, run by the sbatch script on the compute nodes");
  job->group("");
  job->require_subcommand(1);

  // sample: one JSON line per interval to <log base>.usage.<node>.jsonl, until killed.
  {
    struct O {
      std::string log_base, interval = "5", proc = "/proc";
      int count = 0;
    };
    auto o = std::make_shared<O>();
    CLI::App* c = job->add_subcommand("sample", "Sample the job's CPU, memory and GPUs on this node");
    c->add_option("--log-base", o->log_base, "<output_dir>/<job name>_<job id>")->required();
    c->add_option("--interval", o->interval, "Seconds between samples (5s)");
    c->add_option("--count", o->count, "Stop after this many samples (0: until killed)");
    c->add_option("--proc", o->proc, "The proc file system (tests)");
    c->callback([o, &ctx] {
      double interval = parse_seconds(o->interval, "--interval");
      Sampler::Options so;
      so.proc_root = o->proc;
      so.node = this_node();
      so.job_id = job_id_from_env();
      so.attempt = env_int("SLURM_RESTART_COUNT", 0);
      so.cpus = env_int("SLURM_CPUS_ON_NODE", 0);
      so.ticks_per_s = ::sysconf(_SC_CLK_TCK);
      so.page_size = ::sysconf(_SC_PAGESIZE);
      // The step's own, per node; SLURM_JOB_GPUS is the batch node's, inherited.
      so.gpu_indices = parse_gpu_list(env("SLURM_STEP_GPUS", env("SLURM_JOB_GPUS")));
      so.mem_limit_bytes = static_cast<long long>(env_int("SLURM_MEM_PER_NODE", 0)) * 1024 * 1024;
      Sampler sampler(so, ctx.runner);
      // Started in the background by the training step's task: it ends with the task.
      ::prctl(PR_SET_PDEATHSIG, SIGTERM);
      std::string path = usage_path(o->log_base, so.node);
      std::string request = stacks_request_path(o->log_base, so.attempt);
      std::string stacks = stacks_path(o->log_base, so.attempt, so.node);
      double next = 0;
      for (int i = 0; o->count == 0 || i < o->count;) {
        double now = wall_now();
        if (now >= next) {
          UsageSample s = sampler.take(now);
          std::ofstream out(path, std::ios::app);
          out << usage_sample_json(s).dump() << '\n';
          if (!out.flush()) throw UserError(Location{path}, "", "cannot append the sample");
          next = now + interval;
          i++;
          revalidate_folder(o->log_base);  // on NFS: see the watchdog's request file soon
        }
        // The watchdog asks for the ranks' stacks before it cancels or requeues.
        if (::access(request.c_str(), F_OK) == 0 && ::access(stacks.c_str(), F_OK) != 0)
          write_file_atomic(stacks, dump_stacks(ctx.runner, o->proc, so.job_id, so.node, 10, o->log_base));
        if (o->count == 0 || i < o->count) std::this_thread::sleep_for(std::chrono::milliseconds(500));
      }
    });
  }

  // watch: the stall watchdog, in the batch shell's node.
  {
    struct O {
      std::string log_base, stall_after = "30m", action = "warn", interval = "5", nodes, pattern;
      int tasks = 1, tasks_per_node = 1, max_restarts = 0, epoch_base = 1;
      bool per_gpu = false;
    };
    auto o = std::make_shared<O>();
    CLI::App* c = job->add_subcommand("watch", "Watch the training step for a stall and act on it");
    c->add_option("--log-base", o->log_base, "<output_dir>/<job name>_<job id>")->required();
    c->add_option("--stall-after", o->stall_after, "No progress for this long is a stall (30m, watchdog.stall_after's default)");
    c->add_option("--action", o->action, "warn, cancel or requeue")->check(CLI::IsMember({"warn", "cancel", "requeue"}));
    c->add_option("--interval", o->interval, "Seconds between observations (5)");
    c->add_option("--nodes", o->nodes, "The job's nodes, space-separated, in order")->required();
    c->add_option("--tasks", o->tasks, "Tasks of the training step");
    c->add_option("--tasks-per-node", o->tasks_per_node, "Tasks per node");
    c->add_flag("--per-gpu", o->per_gpu, "A task is a rank");
    c->add_option("--max-restarts", o->max_restarts, "requeue.max_restarts");
    c->add_option("--pattern", o->pattern, "The progress pattern (named groups epoch, step)");
    c->add_option("--epoch-base", o->epoch_base, "progress.epoch_base");
    c->callback([o, &ctx] {
      WatchOptions w;
      w.log_base = o->log_base;
      w.job_id = job_id_from_env();
      w.attempt = env_int("SLURM_RESTART_COUNT", 0);
      w.max_restarts = o->max_restarts;
      w.tasks = o->tasks;
      w.tasks_per_node = o->tasks_per_node;
      w.per_gpu = o->per_gpu;
      for (const auto& n : split(o->nodes, ' '))
        if (!n.empty()) w.nodes.push_back(n);
      w.stall_after_s = parse_seconds(o->stall_after, "--stall-after");
      w.interval_s = parse_seconds(o->interval, "--interval");
      w.action = o->action == "cancel" ? StallAction::Cancel : o->action == "requeue" ? StallAction::Requeue : StallAction::Warn;
      if (!o->pattern.empty()) {
        ProgressSpec p;
        p.pattern = o->pattern;
        p.epoch_base = o->epoch_base;
        w.progress = p;
      }
      w.stacks_wait_s = w.interval_s + 13;  // a sample's sleep, the dumps' 10 s, slack
      Watcher watcher(w, ctx.runner, wall_now());
      while (true) {
        std::this_thread::sleep_for(std::chrono::duration<double>(w.interval_s));
        if (!watcher.tick(wall_now())) break;
      }
    });
  }

  // check: one task per node, before the training step.
  {
    struct O {
      std::string log_base, master_addr, master_host, interface, deadline = "10";
      int master_port = 0, nodes = 1, gpus = -1;
      long long min_free_mib = -1;
    };
    auto o = std::make_shared<O>();
    CLI::App* c = job->add_subcommand("check", "Check this node before training: GPUs, rendezvous port, free memory");
    c->add_option("--log-base", o->log_base, "<output_dir>/<job name>_<job id>")->required();
    c->add_option("--master-addr", o->master_addr, "MASTER_ADDR")->required();
    c->add_option("--master-port", o->master_port, "MASTER_PORT")->required();
    c->add_option("--master-host", o->master_host, "The first node's name")->required();
    c->add_option("--interface", o->interface, "master.interface, for messages");
    c->add_option("--nodes", o->nodes, "The job's node count");
    c->add_option("--gpus", o->gpus, "GPUs expected on this node (default: SLURM_GPUS_ON_NODE)");
    c->add_option("--min-free-mib", o->min_free_mib, "Free memory needed (default: half of SLURM_MEM_PER_NODE, else 256)");
    c->add_option("--deadline", o->deadline, "Seconds for the whole check (10)");
    c->callback([o, &ctx] {
      NodeCheckOptions n;
      n.node = this_node();
      n.listen = n.node == o->master_host;
      n.master_addr = o->master_addr;
      n.master_host = o->master_host;
      n.master_port = o->nodes > 1 ? o->master_port : 0;
      n.interface = o->interface;
      n.peers = o->nodes - 1;
      int gpus = o->gpus >= 0 ? o->gpus : env_int("SLURM_GPUS_ON_NODE", 0);
      if (gpus > 0) n.expected_gpus = gpus;
      // Half the job's memory: MemAvailable never reaches a whole-node request
      // (the kernel and slurmd hold some), while what an earlier job's stray
      // processes still hold usually takes far more.
      int mem = env_int("SLURM_MEM_PER_NODE", 0);
      n.min_free_mib = o->min_free_mib >= 0 ? o->min_free_mib : mem > 0 ? mem / 2 : 256;
      n.deadline_s = parse_seconds(o->deadline, "--deadline");
      NodeCheckResult r = check_node(n, ctx.runner);
      int attempt = env_int("SLURM_RESTART_COUNT", 0);
      write_file_atomic(node_check_path(o->log_base, attempt, n.node), node_check_json(r).dump() + "\n");
      for (const auto& p : r.problems) std::cerr << "ddpctl: node check: " << p << '\n';
      if (!r.ok) throw CLI::RuntimeError(3);
    });
  }

  // checked: on the batch node, after the check step: go on, fail, or requeue without the bad nodes.
  {
    struct O {
      std::string log_base, nodes;
      int max_restarts = 0;
    };
    auto o = std::make_shared<O>();
    CLI::App* c = job->add_subcommand("checked", "Read every node's check: 0 go on, 10 requeue without the nodes printed, 3 fail");
    c->add_option("--log-base", o->log_base, "<output_dir>/<job name>_<job id>")->required();
    c->add_option("--nodes", o->nodes, "The job's nodes, space-separated")->required();
    c->add_option("--max-restarts", o->max_restarts, "requeue.max_restarts (0: no requeue)");
    c->callback([o] {
      int attempt = env_int("SLURM_RESTART_COUNT", 0);
      std::vector<std::string> nodes;
      std::vector<std::optional<NodeCheckResult>> results;
      for (const auto& n : split(o->nodes, ' ')) {
        if (n.empty()) continue;
        nodes.push_back(n);
        std::optional<NodeCheckResult> r;
        try {
          r = parse_node_check(read_file(node_check_path(o->log_base, attempt, n)));
        } catch (const std::exception&) {
        }
        results.push_back(r);
      }
      CheckDecision d = decide_after_check(nodes, results, attempt, o->max_restarts);
      if (d.ok) {
        for (const auto& l : d.lines) std::cout << "ddpctl: node check: " << l << '\n';
        return;
      }
      for (const auto& l : d.lines) std::cerr << "ddpctl: node check: " << l << '\n';
      if (d.requeue) {
        // The nodes to exclude, then the first problem (the requeue's reason).
        std::cout << join(d.bad_nodes, ",") << '\n' << (d.lines.empty() ? "" : d.lines.front()) << '\n';
        throw CLI::RuntimeError(10);
      }
      throw CLI::RuntimeError(3);
    });
  }

  // stacks: this node's training processes, by hand (`srun --overlap --jobid ID
  // ddpctl job stacks ...`); in a job, the watchdog asks each node's sampler.
  {
    struct O {
      std::string log_base, proc = "/proc";
      double budget = 10;
    };
    auto o = std::make_shared<O>();
    CLI::App* c = job->add_subcommand("stacks", "Record the stacks of the job's training processes on this node");
    c->add_option("--log-base", o->log_base, "<output_dir>/<job name>_<job id>")->required();
    c->add_option("--budget", o->budget, "Seconds for the dumps (10)");
    c->add_option("--proc", o->proc, "The proc file system (tests)");
    c->callback([o, &ctx] {
      std::string node = this_node();
      std::string text = dump_stacks(ctx.runner, o->proc, job_id_from_env(), node, o->budget, o->log_base);
      write_file_atomic(stacks_path(o->log_base, env_int("SLURM_RESTART_COUNT", 0), node), text);
    });
  }

  // environment: on the batch node as an attempt starts, in the background:
  // what it runs with (job_environment.hpp).
  {
    struct O {
      std::string log_base, nodes, env, container, image;
      size_t container_words = 0;
      std::vector<std::string> argv;
    };
    auto o = std::make_shared<O>();
    CLI::App* c = job->add_subcommand("environment", "Record what this attempt runs with: program, versions, modules, environment");
    c->add_option("--log-base", o->log_base, "<output_dir>/<job name>_<job id>")->required();
    c->add_option("--nodes", o->nodes, "The job's nodes, space-separated, in order")->required();
    c->add_option("--env", o->env, "The variables ddpctl set, space-separated");
    c->add_option("--container", o->container, "The container runtime the program runs in");
    c->add_option("--container-image", o->image, "Its image");
    c->add_option("--container-words", o->container_words, "How many of the command's first words start the container");
    c->add_option("command", o->argv, "The launch command, after --")->required();
    c->callback([o, &ctx] {
      EnvironmentOptions eo;
      eo.argv = o->argv;
      eo.container = o->container;
      eo.image = o->image;
      eo.container_words = o->container_words;
      eo.nodes = split_ws(o->nodes);
      eo.env_names = split_ws(o->env);
      std::error_code ec;
      eo.cwd = std::filesystem::current_path(ec).string();
      eo.getenv = [](const std::string& name) -> std::optional<std::string> {
        const char* v = std::getenv(name.c_str());
        return v ? std::optional<std::string>(v) : std::nullopt;
      };
      JobEnvironment e = collect_environment(eo, ctx.runner);
      write_file_atomic(environment_path(o->log_base, e.attempt), environment_json(e).dump(2) + "\n");
    });
  }

  // requeue: from inside the job, optionally excluding nodes.
  {
    struct O {
      std::string exclude;
    };
    auto o = std::make_shared<O>();
    CLI::App* c = job->add_subcommand("requeue", "Requeue this job, excluding nodes");
    c->add_option("--exclude", o->exclude, "Nodes to exclude, comma-separated");
    c->callback([o, &ctx] {
      // Requeuing signals this job's processes, this one included; it
      // finishes what it started within Slurm's KillWait.
      std::signal(SIGTERM, SIG_IGN);
      std::vector<std::string> nodes;
      for (const auto& n : split(o->exclude, ','))
        if (!n.empty()) nodes.push_back(n);
      if (auto why = requeue_job(ctx.runner, job_id_from_env(), nodes)) {
        std::cerr << "ddpctl: requeue: " << *why << '\n';
        throw CLI::RuntimeError(1);
      }
    });
  }
}

}  // namespace ddpctl::cli
