// Reading what a job's tasks left behind (task_logs.hpp): which attempt's
// lines, the line that says why, torchrun's root cause.
#include "runs/task_logs.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>

#include "runs/job_files.hpp"
#include "base/regex.hpp"
#include "base/text.hpp"

namespace ddpctl {

namespace fs = std::filesystem;

namespace {

// "[default0]:ValueError: boom" (torchrun --tee) -> "ValueError: boom".
std::string strip_tee_prefix(const std::string& line) {
  static const Regex prefix(R"(^\[[A-Za-z_]*\d+\]:)");
  return prefix.replace_first(line, "");
}

// A line that reports another rank's failure rather than its own: the
// peers of a rank that died see its sockets close, or are stopped.
bool is_consequence(const std::string& line) {
  static const std::vector<std::string> words = {
      "Connection closed by peer", "Connection reset by peer", "Broken pipe", "Socket Timeout",
      "NCCL communicator was aborted", "death signal", "SignalException"};
  for (const auto& w : words)
    if (line.find(w) != std::string::npos) return true;
  return false;
}

// Each Python traceback's exception line, in order ("ValueError: boom");
// torchrun's own (the agent reporting its workers) left out.
std::vector<std::string> python_exceptions(const std::vector<std::string>& lines) {
  static const Regex exception(R"(^([A-Za-z_][\w.]*)(Error|Exception|Exit|Interrupt|Fault|Failure|Warning)\b.*)");
  static const Regex plain_exception(R"(^[A-Za-z_][\w.]*: .+)");
  const std::string header = "Traceback (most recent call last):";
  std::vector<std::string> out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i] != header) continue;
    size_t end = i + 1;
    while (end < lines.size() && lines[end] != header) ++end;
    std::string found;
    for (size_t j = end; j-- > i + 1 && found.empty();)
      if (exception.full_match(lines[j])) found = lines[j];
    for (size_t j = i + 1; j < end && found.empty(); ++j)
      if (plain_exception.full_match(lines[j]) && lines[j].find("File \"") == std::string::npos) found = lines[j];
    if (!found.empty() && found.find("torch.distributed.elastic.") == std::string::npos) out.push_back(found);
  }
  return out;
}

}  // namespace

bool is_noise(const std::string& line) {
  return line.find("slurmstepd") != std::string::npos || line.rfind("srun: ", 0) == 0 ||
         line.find("*** STEP ") != std::string::npos || line.find("*** JOB ") != std::string::npos;
}

// The lines of the latest attempt: after the last "ddpctl: job N (...) attempt K" line.
std::vector<std::string> latest_attempt(std::vector<std::string> lines) {
  for (size_t i = lines.size(); i-- > 0;)
    if (lines[i].rfind("ddpctl: job ", 0) == 0 && lines[i].find(" attempt ") != std::string::npos)
      return std::vector<std::string>(lines.begin() + static_cast<long>(i) + 1, lines.end());
  return lines;
}

// "Killed" -> 9, "Segmentation fault" -> 11: srun's words for a task's signal.
std::optional<int> signal_named(const std::string& words) {
  for (int s = 1; s < 32; ++s)
    if (const char* name = strsignal(s); name && words == name) return s;
  return std::nullopt;
}

// The line of a task's log that says what went wrong. With `tag` (torchrun's
// "[default1]:" for the local rank that failed first), that rank's lines
// where the log tells ranks apart.
std::string meaningful_line(const std::vector<std::string>& raw, const std::string& tag) {
  std::vector<std::string> lines;
  bool tagged = !tag.empty() && std::any_of(raw.begin(), raw.end(), [&](const std::string& l) { return l.rfind(tag, 0) == 0; });
  for (const auto& l : raw) {
    if (tagged && l.rfind("[", 0) == 0 && l.rfind(tag, 0) != 0 && l != strip_tee_prefix(l)) continue;  // another rank's
    std::string s = trim(strip_tee_prefix(l));
    if (!s.empty() && !is_noise(s)) lines.push_back(s);
  }
  // ddp-train's own error line, and its launcher's report of a worker.
  for (size_t i = lines.size(); i-- > 0;)
    if (lines[i].rfind("ddp-train: error:", 0) == 0) return lines[i];
  // A Python traceback's exception: the first that is not a peer's
  // "Connection closed" (torchrun's summary, printed after it, is skipped).
  std::vector<std::string> exceptions = python_exceptions(lines);
  for (const auto& e : exceptions)
    if (!is_consequence(e)) return e;
  if (!exceptions.empty()) return exceptions.front();
  for (size_t i = lines.size(); i-- > 0;)
    if (lines[i].find("command not found") != std::string::npos ||
        lines[i].find("No such file or directory") != std::string::npos ||
        lines[i].find("Permission denied") != std::string::npos)
      return lines[i];
  return lines.empty() ? "" : lines.back();
}

// Whether a task's log shows it failed only because another rank did.
bool failed_as_consequence(const std::vector<std::string>& lines, const std::string& meaningful) {
  if (is_consequence(meaningful)) return true;
  // The bundled trainer's launcher reporting a worker that exited after a peer's error.
  if (meaningful.find("exited with status") == std::string::npos) return false;
  return std::any_of(lines.begin(), lines.end(), [](const std::string& l) { return is_consequence(l); }) &&
         std::none_of(lines.begin(), lines.end(), [](const std::string& l) {
           return l.find("was killed by signal") != std::string::npos;
         });
}

// torchrun's "Root Cause (first observed failure)" block: the rank and host.
TorchrunRootCause read_torchrun_root_cause(const std::vector<std::string>& lines) {
  TorchrunRootCause cause;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].find("Root Cause (first observed failure)") == std::string::npos) continue;
    static const Regex local(R"(\(local_rank:\s*(\d{1,9})\))");
    static const Regex rank(R"(^\s*rank\s*:\s*(\d{1,9})\b)"), host(R"(^\s*host\s*:\s*(\S+))"),
        code(R"(^\s*exitcode\s*:\s*(-?\d{1,9})\b)");
    for (size_t j = i + 1; j < lines.size() && j < i + 12; ++j) {
      RegexMatch m;
      if (rank.search(lines[j], &m)) cause.rank = std::stoi(m.str(1));
      if (local.search(lines[j], &m)) cause.local_rank = std::stoi(m.str(1));
      if (host.search(lines[j], &m)) cause.node = m.str(1);
      if (code.search(lines[j], &m)) {
        int c = std::stoi(m.str(1));
        cause.exit = c < 0 ? ExitStatus{std::nullopt, -c} : ExitStatus{c, std::nullopt};
      }
    }
    break;
  }
  return cause;
}

std::string log_base(const RunShape& shape, const std::string& job_id) {
  return job_files::log_base(shape.output_dir, shape.job_name, job_id);
}

int latest_logged_attempt(const std::string& base) {
  int latest = -1;
  for (int k = 0; k < 1000; ++k) {
    std::error_code ec;
    if (!fs::exists(job_files::step_log(base, k, 0), ec)) {
      if (k > latest + 1) break;  // allow no gaps beyond one
      continue;
    }
    latest = k;
  }
  return latest;
}

}  // namespace ddpctl
