// Taking a sample on a node (sampler.hpp): the job's processes from /proc,
// its GPUs from nvidia-smi.
#include "agent/sampler.hpp"

#include <algorithm>
#include <cmath>
#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#include "base/text.hpp"

namespace ddpctl {

namespace {

// A small file of /proc read whole (they have no size; read until EOF).
std::optional<std::string> slurp(const std::string& path, size_t max_bytes = 1 << 20) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string out;
  char buf[8192];
  while (out.size() < max_bytes) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      ::close(fd);
      return std::nullopt;
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

std::optional<int> to_int(const std::string& s) {
  if (s.empty() || s.size() > 9) return std::nullopt;
  for (char c : s)
    if (c < '0' || c > '9') return std::nullopt;
  return std::stoi(s);
}

struct Stat {
  char state = '?';
  int ppid = 0;
  unsigned long long utime = 0, stime = 0, start = 0;
  long long rss_pages = 0;
};

// /proc/PID/stat: "pid (comm) state ppid ..."; comm may hold spaces and
// parentheses, so the fields are counted from the last ')'.
std::optional<Stat> parse_stat(const std::string& text) {
  size_t close = text.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream in(text.substr(close + 1));
  std::vector<std::string> f;
  std::string w;
  while (in >> w) f.push_back(w);
  // f[0] is field 3 (state); utime is field 14, stime 15, starttime 22, rss 24.
  if (f.size() < 22) return std::nullopt;
  Stat s;
  s.state = f[0].empty() ? '?' : f[0][0];
  try {
    s.ppid = std::stoi(f[1]);
    s.utime = std::stoull(f[11]);
    s.stime = std::stoull(f[12]);
    s.start = std::stoull(f[19]);
    s.rss_pages = std::stoll(f[21]);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  return s;
}

double round1(double v) { return std::round(v * 10) / 10; }

// Seconds the threads of a process spent runnable but not running: the
// second field of each /proc/PID/task/TID/schedstat (run_delay, in ns). A
// CPU quota's throttling counts here too, as does a crowded core.
double run_delay_s(const std::string& process_dir) {
  DIR* dir = ::opendir((process_dir + "/task").c_str());
  if (!dir) return 0;
  unsigned long long ns = 0;
  while (dirent* e = ::readdir(dir)) {
    if (!to_int(e->d_name)) continue;
    auto text = slurp(process_dir + "/task/" + e->d_name + "/schedstat", 256);
    if (!text) continue;
    std::istringstream in(*text);
    unsigned long long run = 0, delay = 0;
    if (in >> run >> delay) ns += delay;
  }
  ::closedir(dir);
  return static_cast<double>(ns) / 1e9;
}

// The variables that tell a process's job, rank and role, from its
// /proc/PID/environ (NUL-separated NAME=VALUE).
std::map<std::string, std::string> job_vars(const std::string& env) {
  std::map<std::string, std::string> vars;
  size_t begin = 0;
  while (begin < env.size()) {
    size_t end = env.find('\0', begin);
    if (end == std::string::npos) end = env.size();
    std::string_view entry(env.data() + begin, end - begin);
    size_t eq = entry.find('=');
    if (eq != std::string_view::npos) {
      std::string name(entry.substr(0, eq));
      if (name == "SLURM_JOB_ID" || name == "SLURM_PROCID" || name == "RANK" || name == "DDPCTL_TRAINING" ||
          name == "DDPCTL_AGENT_PROCESS" || name == "SLURMD_NODENAME" || name == "SLURM_CLUSTER_NAME" ||
          name == "SLURM_CONF")
        vars[name] = std::string(entry.substr(eq + 1));
    }
    begin = end + 1;
  }
  return vars;
}

}  // namespace

JobProcessReader::JobProcessReader(std::string proc_root, JobMatch match, long ticks_per_s, long page_size)
    : root_(std::move(proc_root)), match_(std::move(match)), ticks_(ticks_per_s > 0 ? ticks_per_s : 100),
      page_(page_size > 0 ? page_size : 4096) {}

std::vector<ProcessUsage> JobProcessReader::read() {
  std::vector<ProcessUsage> out;
  DIR* dir = ::opendir(root_.c_str());
  if (!dir) return out;
  std::map<int, Identity> seen;
  while (dirent* e = ::readdir(dir)) {
    auto pid = to_int(e->d_name);
    if (!pid) continue;
    std::string base = root_ + "/" + e->d_name;
    auto stat_text = slurp(base + "/stat", 4096);
    if (!stat_text) continue;  // gone meanwhile
    auto st = parse_stat(*stat_text);
    if (!st) continue;
    Identity id;
    auto k = known_.find(*pid);
    // A process of the job not yet marked as training is read again: the
    // step's `bash -c` exports RANK and DDPCTL_TRAINING and then execs the
    // program, which keeps the pid and start time but shows the new environment.
    if (k != known_.end() && k->second.start == st->start && (!k->second.ours || k->second.training)) {
      id = k->second;
    } else {
      id.start = st->start;
      // Another user's environment cannot be read: not ours.
      auto env = slurp(base + "/environ");
      // Read empty while the process execs (or before its first exec): not
      // known yet, asked again at the next sample rather than remembered.
      if (env && env->empty()) continue;
      // Unreadable though ours (a process between fork and exec): likewise.
      struct stat owner {};
      if (!env && ::stat(base.c_str(), &owner) == 0 && owner.st_uid == ::getuid()) continue;
      if (env) {
        std::map<std::string, std::string> vars = job_vars(*env);
        auto same = [&vars](const char* name, const std::string& want) {
          auto v = vars.find(name);
          return want.empty() || v == vars.end() || v->second == want;
        };
        bool here = same("SLURMD_NODENAME", match_.node) && same("SLURM_CLUSTER_NAME", match_.cluster) &&
                    same("SLURM_CONF", match_.conf);
        id.ours = vars["SLURM_JOB_ID"] == match_.job_id && vars["DDPCTL_AGENT_PROCESS"] != "1" && here;
        id.training = vars["DDPCTL_TRAINING"] == "1";
        id.rank = to_int(vars["RANK"]);
        id.task = to_int(vars["SLURM_PROCID"]);
      }
    }
    seen[*pid] = id;
    if (!id.ours || st->state == 'Z') continue;
    ProcessUsage p;
    p.pid = *pid;
    p.ppid = st->ppid;
    p.rank = id.rank;
    p.task = id.task;
    p.training = id.training;
    p.state = st->state;
    p.cpu_s = static_cast<double>(st->utime + st->stime) / static_cast<double>(ticks_);
    if (id.training) p.wait_s = run_delay_s(base);
    p.rss_bytes = st->rss_pages * page_;
    out.push_back(p);
  }
  ::closedir(dir);
  known_ = std::move(seen);  // forget the processes that are gone
  std::sort(out.begin(), out.end(), [](const ProcessUsage& a, const ProcessUsage& b) { return a.pid < b.pid; });
  return out;
}

const std::vector<std::string>& nvidia_smi_query() {
  static const std::vector<std::string> argv = {
      "nvidia-smi", "--query-gpu=index,utilization.gpu,memory.used,memory.total", "--format=csv,noheader,nounits"};
  return argv;
}

std::optional<std::vector<GpuUsage>> parse_nvidia_smi(const std::string& text, std::string* problem) {
  std::vector<GpuUsage> gpus;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::vector<std::string> f = split(line, ',');
    for (auto& x : f) {
      size_t a = x.find_first_not_of(" \t\r"), b = x.find_last_not_of(" \t\r");
      x = a == std::string::npos ? "" : x.substr(a, b - a + 1);
    }
    auto number = [](const std::string& s) -> std::optional<double> {
      if (s.empty()) return std::nullopt;
      char* end = nullptr;
      double v = std::strtod(s.c_str(), &end);
      if (end != s.c_str() + s.size() || !std::isfinite(v)) return std::nullopt;
      return v;
    };
    auto index = f.size() == 4 ? to_int(f[0]) : std::nullopt;
    // "[N/A]" (a MIG device's utilisation) reads as 0.
    auto util = f.size() == 4 ? (f[1].find("N/A") != std::string::npos ? std::optional<double>(0) : number(f[1]))
                              : std::nullopt;
    auto used = f.size() == 4 ? number(f[2]) : std::nullopt, total = f.size() == 4 ? number(f[3]) : std::nullopt;
    if (!index || !util || !used || !total) {
      if (problem) *problem = "nvidia-smi printed " + printable(line, 120);
      return std::nullopt;
    }
    gpus.push_back({*index, *util, *used, *total});
  }
  return gpus;
}

Sampler::Sampler(Options o, CommandRunner& runner)
    : o_(std::move(o)), runner_(runner), reader_(o_.proc_root, {o_.job_id, o_.node, o_.cluster, o_.conf}, o_.ticks_per_s, o_.page_size) {}

UsageSample Sampler::take(double now) {
  UsageSample s;
  s.t = now;
  s.node = o_.node;
  s.job_id = o_.job_id;
  s.attempt = o_.attempt;
  s.cpus = o_.cpus;
  s.mem_limit_bytes = o_.mem_limit_bytes;
  double dt = first_ ? 0 : now - last_t_;
  s.interval_s = round1(dt);
  std::vector<ProcessUsage> procs = reader_.read();
  std::map<int, double> cpu_now, wait_now;
  double busy = 0;
  std::map<std::pair<int, int>, RankUsage> ranks;  // (rank or -1, task or -1)
  for (const auto& p : procs) {
    cpu_now[p.pid] = p.cpu_s;
    // A process started since the last sample used all its CPU time since.
    auto last = last_cpu_.find(p.pid);
    double delta = last == last_cpu_.end() ? p.cpu_s : std::max(0.0, p.cpu_s - last->second);
    busy += delta;
    s.rss_bytes += p.rss_bytes;
    s.procs++;
    if (!p.training) continue;
    RankUsage& r = ranks[{p.rank.value_or(-1), p.rank ? -1 : p.task.value_or(-1)}];
    r.rank = p.rank;
    if (!p.rank) r.task = p.task;
    r.cpu_s += p.cpu_s;
    r.cpu_pct = r.cpu_pct.value_or(0) + (dt > 0 ? 100 * delta / dt : 0);
    // Threads that ended take their share with them: a sum that went down counts as none.
    wait_now[p.pid] = p.wait_s;
    auto last_wait = last_wait_.find(p.pid);
    double waited = last_wait == last_wait_.end() ? p.wait_s : std::max(0.0, p.wait_s - last_wait->second);
    r.wait_pct = r.wait_pct.value_or(0) + (dt > 0 ? 100 * waited / dt : 0);
    r.rss_bytes += p.rss_bytes;
    r.procs++;
    r.states += p.state;
  }
  for (auto& [key, r] : ranks) {
    if (dt <= 0) r.cpu_pct.reset(), r.wait_pct.reset();
    else r.cpu_pct = round1(*r.cpu_pct), r.wait_pct = round1(*r.wait_pct);
    r.cpu_s = round1(r.cpu_s);
    s.ranks.push_back(r);
  }
  if (dt > 0) s.cpu_pct = round1(100 * busy / dt);
  last_cpu_ = std::move(cpu_now);
  last_wait_ = std::move(wait_now);
  last_t_ = now;
  first_ = false;

  if (auto mem = slurp(o_.proc_root + "/meminfo", 1 << 16)) {
    s.mem_total_bytes = meminfo_kib(*mem, "MemTotal").value_or(0) * 1024;
    s.mem_available_bytes = meminfo_kib(*mem, "MemAvailable").value_or(0) * 1024;
  }

  if (query_gpus_) take_gpus(s);
  s.gpu_note = gpu_note_;
  return s;
}

void Sampler::take_gpus(UsageSample& s) {
  CommandResult r = runner_.run(nvidia_smi_query(), std::chrono::seconds(10));
  if (r.not_found) {
    query_gpus_ = false;  // not on this node: not asked again
    gpu_note_ = "no nvidia-smi on " + o_.node;
  } else if (!r.ok()) {
    gpu_note_ = r.describe();
  } else {
    std::string problem;
    if (auto gpus = parse_nvidia_smi(r.out, &problem)) {
      gpu_note_.clear();
      // Only the job's GPUs, where Slurm said which and nvidia-smi shows them all.
      bool all_shown = !o_.gpu_indices.empty();
      for (int i : o_.gpu_indices)
        all_shown = all_shown && std::any_of(gpus->begin(), gpus->end(), [i](const GpuUsage& g) { return g.index == i; });
      for (const auto& g : *gpus)
        if (!all_shown || std::find(o_.gpu_indices.begin(), o_.gpu_indices.end(), g.index) != o_.gpu_indices.end())
          s.gpus.push_back(g);
    } else {
      gpu_note_ = problem;
    }
  }
}

}  // namespace ddpctl
