#include "usage.hpp"

#include <algorithm>
#include <cmath>
#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#include "text.hpp"

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
    s.utime = std::stoull(f[11]);
    s.stime = std::stoull(f[12]);
    s.start = std::stoull(f[19]);
    s.rss_pages = std::stoll(f[21]);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  return s;
}

std::optional<long long> meminfo_kib(const std::string& text, const std::string& key) {
  size_t at = text.find(key + ":");
  if (at == std::string::npos) return std::nullopt;
  std::istringstream in(text.substr(at + key.size() + 1));
  long long v = 0;
  if (!(in >> v)) return std::nullopt;
  return v;
}

nlohmann::json opt_json(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); }
nlohmann::json opt_json(const std::optional<int>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); }

double round1(double v) { return std::round(v * 10) / 10; }

}  // namespace

JobProcessReader::JobProcessReader(std::string proc_root, std::string job_id, long ticks_per_s, long page_size,
                                   std::string node)
    : root_(std::move(proc_root)), job_id_(std::move(job_id)), node_(std::move(node)), ticks_(ticks_per_s > 0 ? ticks_per_s : 100),
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
        std::map<std::string, std::string> vars;
        size_t begin = 0;
        while (begin < env->size()) {
          size_t end = env->find('\0', begin);
          if (end == std::string::npos) end = env->size();
          std::string_view entry(env->data() + begin, end - begin);
          size_t eq = entry.find('=');
          if (eq != std::string_view::npos) {
            std::string name(entry.substr(0, eq));
            if (name == "SLURM_JOB_ID" || name == "SLURM_PROCID" || name == "RANK" || name == "DDPCTL_TRAINING" ||
                name == "DDPCTL_AGENT_PROCESS" || name == "SLURMD_NODENAME")
              vars[name] = std::string(entry.substr(eq + 1));
          }
          begin = end + 1;
        }
        bool here = node_.empty() || !vars.count("SLURMD_NODENAME") || vars["SLURMD_NODENAME"] == node_;
        id.ours = vars["SLURM_JOB_ID"] == job_id_ && vars["DDPCTL_AGENT_PROCESS"] != "1" && here;
        id.training = vars["DDPCTL_TRAINING"] == "1";
        id.rank = to_int(vars["RANK"]);
        id.task = to_int(vars["SLURM_PROCID"]);
      }
    }
    seen[*pid] = id;
    if (!id.ours || st->state == 'Z') continue;
    ProcessUsage p;
    p.pid = *pid;
    p.rank = id.rank;
    p.task = id.task;
    p.training = id.training;
    p.state = st->state;
    p.cpu_s = static_cast<double>(st->utime + st->stime) / static_cast<double>(ticks_);
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
    : o_(std::move(o)), runner_(runner), reader_(o_.proc_root, o_.job_id, o_.ticks_per_s, o_.page_size, o_.node) {}

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
  std::map<int, double> cpu_now;
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
    r.rss_bytes += p.rss_bytes;
    r.procs++;
    r.states += p.state;
  }
  for (auto& [key, r] : ranks) {
    if (dt <= 0) r.cpu_pct.reset();
    else r.cpu_pct = round1(*r.cpu_pct);
    r.cpu_s = round1(r.cpu_s);
    s.ranks.push_back(r);
  }
  if (dt > 0) s.cpu_pct = round1(100 * busy / dt);
  last_cpu_ = std::move(cpu_now);
  last_t_ = now;
  first_ = false;

  if (auto mem = slurp(o_.proc_root + "/meminfo", 1 << 16)) {
    s.mem_total_bytes = meminfo_kib(*mem, "MemTotal").value_or(0) * 1024;
    s.mem_available_bytes = meminfo_kib(*mem, "MemAvailable").value_or(0) * 1024;
  }

  if (query_gpus_) {
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
  s.gpu_note = gpu_note_;
  return s;
}

nlohmann::json usage_sample_json(const UsageSample& s) {
  nlohmann::json ranks = nlohmann::json::array();
  for (const auto& r : s.ranks)
    ranks.push_back({{"rank", opt_json(r.rank)}, {"task", opt_json(r.task)}, {"cpu_s", r.cpu_s},
                     {"cpu_pct", opt_json(r.cpu_pct)}, {"rss_bytes", r.rss_bytes}, {"procs", r.procs},
                     {"states", r.states}});
  nlohmann::json gpus = nlohmann::json::array();
  for (const auto& g : s.gpus)
    gpus.push_back({{"index", g.index}, {"util_pct", g.util_pct}, {"mem_used_mib", g.mem_used_mib},
                    {"mem_total_mib", g.mem_total_mib}});
  nlohmann::json j = {{"t", std::round(s.t * 1000) / 1000},
                      {"node", s.node},
                      {"job_id", s.job_id},
                      {"attempt", s.attempt},
                      {"interval_s", s.interval_s},
                      {"cpus", s.cpus},
                      {"cpu_pct", opt_json(s.cpu_pct)},
                      {"rss_bytes", s.rss_bytes},
                      {"procs", s.procs},
                      {"ranks", ranks},
                      {"gpus", gpus},
                      {"mem_total_bytes", s.mem_total_bytes},
                      {"mem_available_bytes", s.mem_available_bytes},
                      {"mem_limit_bytes", s.mem_limit_bytes}};
  if (!s.gpu_note.empty()) j["gpu_note"] = s.gpu_note;
  return j;
}

std::optional<UsageSample> parse_usage_sample(const std::string& line) {
  nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("t") || !j["t"].is_number()) return std::nullopt;
  auto num = [&](const nlohmann::json& o, const char* k) -> std::optional<double> {
    if (o.contains(k) && o[k].is_number()) return o[k].get<double>();
    return std::nullopt;
  };
  auto integer = [&](const nlohmann::json& o, const char* k) -> std::optional<int> {
    if (o.contains(k) && o[k].is_number_integer()) return o[k].get<int>();
    return std::nullopt;
  };
  auto big = [&](const nlohmann::json& o, const char* k) -> long long {
    return o.contains(k) && o[k].is_number() ? o[k].get<long long>() : 0;
  };
  auto str = [&](const nlohmann::json& o, const char* k) -> std::string {
    return o.contains(k) && o[k].is_string() ? o[k].get<std::string>() : "";
  };
  UsageSample s;
  s.t = j["t"].get<double>();
  s.node = str(j, "node");
  s.job_id = str(j, "job_id");
  s.attempt = integer(j, "attempt").value_or(0);
  s.interval_s = num(j, "interval_s").value_or(0);
  s.cpus = integer(j, "cpus").value_or(0);
  s.cpu_pct = num(j, "cpu_pct");
  s.rss_bytes = big(j, "rss_bytes");
  s.procs = integer(j, "procs").value_or(0);
  if (j.contains("ranks") && j["ranks"].is_array())
    for (const auto& r : j["ranks"]) {
      if (!r.is_object()) continue;
      RankUsage u;
      u.rank = integer(r, "rank");
      u.task = integer(r, "task");
      u.cpu_s = num(r, "cpu_s").value_or(0);
      u.cpu_pct = num(r, "cpu_pct");
      u.rss_bytes = big(r, "rss_bytes");
      u.procs = integer(r, "procs").value_or(0);
      u.states = str(r, "states");
      s.ranks.push_back(u);
    }
  if (j.contains("gpus") && j["gpus"].is_array())
    for (const auto& g : j["gpus"]) {
      if (!g.is_object()) continue;
      s.gpus.push_back({integer(g, "index").value_or(0), num(g, "util_pct").value_or(0),
                        num(g, "mem_used_mib").value_or(0), num(g, "mem_total_mib").value_or(0)});
    }
  s.gpu_note = str(j, "gpu_note");
  s.mem_total_bytes = big(j, "mem_total_bytes");
  s.mem_available_bytes = big(j, "mem_available_bytes");
  s.mem_limit_bytes = big(j, "mem_limit_bytes");
  return s;
}

std::string usage_path(const std::string& log_base, const std::string& node) {
  return log_base + ".usage." + node + ".jsonl";
}

std::map<std::string, std::vector<UsageSample>> read_usage(const std::string& log_base, int attempt,
                                                           long long tail_bytes) {
  std::map<std::string, std::vector<UsageSample>> out;
  size_t slash = log_base.rfind('/');
  std::string dir = slash == std::string::npos ? "." : log_base.substr(0, slash);
  std::string prefix = (slash == std::string::npos ? log_base : log_base.substr(slash + 1)) + ".usage.";
  DIR* d = ::opendir(dir.c_str());
  if (!d) return out;
  std::vector<std::string> files;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name.rfind(prefix, 0) == 0 && name.size() > prefix.size() + 6 &&
        name.compare(name.size() - 6, 6, ".jsonl") == 0)
      files.push_back(name);
  }
  ::closedir(d);
  for (const auto& name : files) {
    std::ifstream in(dir + "/" + name);
    std::string line;
    if (tail_bytes > 0) {
      in.seekg(0, std::ios::end);
      long long size = static_cast<long long>(in.tellg());
      // From the byte before the tail: the partial line (or the newline
      // before a tail that starts on a line) is read and dropped.
      if (size > tail_bytes) {
        in.seekg(size - tail_bytes - 1);
        std::getline(in, line);
      } else {
        in.seekg(0);
      }
    }
    while (std::getline(in, line)) {
      auto s = parse_usage_sample(line);
      if (!s || (attempt >= 0 && s->attempt != attempt)) continue;
      out[s->node].push_back(*s);
    }
  }
  for (auto& [node, v] : out)
    std::stable_sort(v.begin(), v.end(), [](const UsageSample& a, const UsageSample& b) { return a.t < b.t; });
  return out;
}

std::optional<UsageNow> usage_now(const std::map<std::string, std::vector<UsageSample>>& samples) {
  UsageNow u;
  double util_sum = 0;
  bool any = false;
  for (const auto& [node, v] : samples) {
    if (v.empty()) continue;
    const UsageSample& s = v.back();
    u.t = any ? std::min(u.t, s.t) : s.t;
    any = true;
    u.nodes[node] = s;
    if (s.cpu_pct) u.cpu_pct = u.cpu_pct.value_or(0) + *s.cpu_pct;
    u.cpus += s.cpus;
    u.rss_bytes += s.rss_bytes;
    for (const auto& g : s.gpus) {
      u.gpus++;
      util_sum += g.util_pct;
      u.gpu_mem_used_mib += g.mem_used_mib;
      u.gpu_mem_total_mib += g.mem_total_mib;
    }
  }
  if (!any) return std::nullopt;
  if (u.gpus > 0) u.gpu_util_pct = util_sum / u.gpus;
  return u;
}

std::string format_bytes(long long bytes) {
  double gib = static_cast<double>(bytes) / (1024.0 * 1024 * 1024);
  if (gib >= 1) return fmt::format("{:.1f} GiB", gib);
  return fmt::format("{:.0f} MiB", static_cast<double>(bytes) / (1024.0 * 1024));
}

std::string format_usage(const UsageNow& u) {
  std::vector<std::string> parts;
  if (u.gpu_util_pct)
    parts.push_back(fmt::format("GPU {:.0f}% {:.0f}/{:.0f} GiB", *u.gpu_util_pct, u.gpu_mem_used_mib / 1024,
                                u.gpu_mem_total_mib / 1024));
  // CPU use is measured between two samples: none yet at the first.
  std::string cpu = u.cpu_pct ? fmt::format("CPU {:.0f}% ", *u.cpu_pct) : std::string();
  parts.push_back(cpu + "RSS " + format_bytes(u.rss_bytes));
  return join(parts, " · ");
}

nlohmann::json usage_json(const UsageNow& u, double now) {
  nlohmann::json nodes = nlohmann::json::object();
  for (const auto& [node, s] : u.nodes) nodes[node] = usage_sample_json(s);
  return {{"t", u.t},
          {"age_s", std::max(0.0, std::round(now - u.t))},
          {"total",
           {{"cpu_pct", opt_json(u.cpu_pct)},
            {"cpus", u.cpus},
            {"rss_bytes", u.rss_bytes},
            {"gpus", u.gpus},
            {"gpu_util_pct", opt_json(u.gpu_util_pct)},
            {"gpu_mem_used_mib", u.gpu_mem_used_mib},
            {"gpu_mem_total_mib", u.gpu_mem_total_mib}}},
          {"nodes", nodes}};
}

UsageSummary summarize_usage(const std::map<std::string, std::vector<UsageSample>>& samples) {
  UsageSummary out;
  double util_sum = 0, mem_sum = 0;
  long gpu_points = 0;
  std::map<long long, long> mem_counts;  // MiB -> samples
  // The job's CPU: the sum over nodes of each node's mean.
  for (const auto& [node, v] : samples) {
    double cpu_sum = 0;
    int cpu_points = 0;
    for (const auto& s : v) {
      out.samples++;
      out.rss_peak_bytes = std::max(out.rss_peak_bytes, s.rss_bytes);
      if (s.cpu_pct) cpu_sum += *s.cpu_pct, cpu_points++;
      for (const auto& g : s.gpus) {
        gpu_points++;
        util_sum += g.util_pct;
        mem_sum += g.mem_used_mib;
        out.gpu_mem_peak_mib = std::max(out.gpu_mem_peak_mib.value_or(0), g.mem_used_mib);
        mem_counts[std::llround(g.mem_used_mib)]++;
      }
    }
    if (cpu_points > 0) out.cpu_pct_mean = out.cpu_pct_mean.value_or(0) + cpu_sum / cpu_points;
  }
  if (gpu_points > 0) {
    out.gpu_util_mean = util_sum / gpu_points;
    out.gpu_mem_mean_mib = mem_sum / gpu_points;
    // The most frequent value; the largest of equally frequent ones (a job sits at its peak).
    long best = 0;
    for (const auto& [mib, n] : mem_counts)
      if (n >= best) best = n, out.gpu_mem_mode_mib = static_cast<double>(mib);
  }
  return out;
}

}  // namespace ddpctl
