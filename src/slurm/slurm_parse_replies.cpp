#include "slurm/slurm_parse_replies.hpp"

#include <fmt/format.h>

#include "slurm/slurm_json.hpp"
#include "base/text.hpp"
#include "base/values.hpp"

namespace ddpctl {

namespace {

// Transport failures after which a job may or may not exist.
bool is_transport_error(const std::string& err) {
  return contains(err, "Socket timed out") || contains(err, "Zero Bytes were transmitted") ||
         contains(err, "Unable to contact slurm controller") || contains(err, "Connection reset") ||
         contains(err, "Communication connection failure") || contains(err, "Slurm backup controller in standby");
}

}  // namespace

SbatchResult parse_sbatch_result(const CommandResult& r) {
  SbatchResult s;
  if (r.not_found) {
    s.kind = SbatchResult::Kind::Rejected;
    s.reason = "sbatch was not found on PATH (is Slurm installed here, or its module loaded?)";
    return s;
  }
  if (r.timed_out || r.term_signal != 0 || r.connection_failed || r.output_cut) {
    s.reason = r.describe();
    return s;
  }
  if (r.exit_code == 0) {
    // --parsable prints "jobid" or "jobid;cluster" as the last line.
    std::string last;
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);)
      if (!trim(line).empty()) last = trim(line);
    std::string id = last.substr(0, last.find(';'));
    if (!id.empty() && is_decimal_number(id) && id.size() < 19) {
      s.kind = SbatchResult::Kind::Submitted;
      s.job_id = id;
      if (auto semi = last.find(';'); semi != std::string::npos) s.cluster = last.substr(semi + 1);
      return s;
    }
    s.reason = fmt::format("sbatch exited 0 but printed no job id (stdout: {})", r.out.empty() ? "empty" : plain_line(trim(r.out), 80));
    return s;
  }
  if (is_transport_error(r.err)) {
    s.reason = r.describe();
    return s;
  }
  s.kind = SbatchResult::Kind::Rejected;
  std::string err = trim(r.err);
  const std::string marker = "Batch job submission failed: ";
  if (auto at = err.find(marker); at != std::string::npos) err = err.substr(at + marker.size());
  if (auto nl = err.find('\n'); nl != std::string::npos) err.erase(nl);
  s.reason = err.empty() ? r.describe() : plain_line(err);
  return s;
}

namespace {

// "1763815200" or "2026-11-22T12:40:00" (local time); 0 if neither.
long long parse_start_time(const std::string& text) {
  if (!text.empty() && is_decimal_number(text) && text.size() < 19) return std::stoll(text);
  std::tm tm{};
  const char* end = strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (end == nullptr || *end != '\0') return 0;
  tm.tm_isdst = -1;
  return static_cast<long long>(std::mktime(&tm));
}

// One line of `sbatch --test-only`, read word by word, since the words between
// the time and "using" changed: 22.05-24.11 print
//   sbatch: Job 3 to start at 1763815200 using 2 processors on nodes g1 in partition cpu
// and 25.05 on add a stray word, or a cluster, after the time:
//   sbatch: Job 47 to start at 1795481304 a using 1 processors on nodes a1 in partition p
//   sbatch: Job 47 to start at 1795481304 on cluster c a using ...
// True when the line holds a start time; the rest is filled where present.
bool read_estimate_line(const std::string& line, StartEstimate& e) {
  std::istringstream in(line);
  std::vector<std::string> w;
  for (std::string word; in >> word;) w.push_back(word);
  size_t at = 0;
  // "Job N to start at TIME"
  for (; at + 5 < w.size(); ++at)
    if (w[at] == "Job" && w[at + 2] == "to" && w[at + 3] == "start" && w[at + 4] == "at") break;
  if (at + 5 >= w.size()) return false;
  long long start = parse_start_time(w[at + 5]);
  if (start == 0) return false;
  e.kind = StartEstimate::Kind::Starts;
  e.start = start;
  for (size_t i = at + 6; i < w.size(); ++i) {
    const bool has_next = i + 1 < w.size();
    if (w[i] == "using" && has_next && is_decimal_number(w[i + 1]) && w[i + 1].size() < 9)
      e.processors = std::stoi(w[i + 1]);
    else if (w[i] == "nodes" && has_next && i > 0 && w[i - 1] == "on")
      e.nodes = w[i + 1];
    else if (w[i] == "partition" && has_next && i > 0 && w[i - 1] == "in")
      e.partition = w[i + 1];
  }
  return true;
}

}  // namespace

StartEstimate parse_test_only(const CommandResult& r) {
  StartEstimate e;
  if (r.not_found) {
    e.reason = "sbatch was not found on PATH (is Slurm installed here, or its module loaded?)";
    return e;
  }
  if (r.timed_out || r.term_signal != 0 || (r.exit_code != 0 && is_transport_error(r.err))) {
    e.reason = r.describe();
    return e;
  }
  std::istringstream lines(r.err);
  if (r.exit_code == 0) {
    for (std::string line; std::getline(lines, line);) {
      if (read_estimate_line(line, e)) return e;
    }
    e.kind = StartEstimate::Kind::Unknown;
    e.reason = fmt::format("sbatch --test-only exited 0 without an estimate ddpctl can read (stderr: {})",
                           r.err.empty() ? "empty" : plain_line(trim(r.err), 200));
    return e;
  }
  // 22.05: "allocation failure: Requested node configuration is not available";
  // others: "sbatch: error: Batch job submission failed: <reason>".
  e.kind = StartEstimate::Kind::Impossible;
  std::string reason;
  for (std::string line; std::getline(lines, line);) {
    line = trim(line);
    if (line.empty()) continue;
    for (const std::string prefix : {"sbatch: error: ", "Batch job submission failed: ", "allocation failure: "})
      if (line.rfind(prefix, 0) == 0) line = line.substr(prefix.size());
    reason = line;  // the last line is the verdict
  }
  e.reason = reason.empty() ? r.describe() : plain_line(reason);
  return e;
}

}  // namespace ddpctl
