#include "slurm/slurm_json.hpp"

#include <cstdlib>
#include <ctime>
#include <fmt/format.h>

#include "base/values.hpp"

namespace ddpctl {

namespace slurm_json {

std::optional<long long> parse_slurm_date(const std::string& s) {
  std::tm tm{};
  const char* end = strptime(s.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (!end || *end) return std::nullopt;
  tm.tm_isdst = -1;
  return static_cast<long long>(std::mktime(&tm));
}

std::optional<long long> parse_limit(const std::string& s) {
  std::string problem;
  if (s.empty() || s == "UNLIMITED" || s == "N/A" || s == "Partition_Limit") return std::nullopt;
  return parse_slurm_time(s, &problem);
}

int to_int(const std::string& s) {
  char* end = nullptr;
  long v = std::strtol(s.c_str(), &end, 10);
  return end && end != s.c_str() ? static_cast<int>(v) : 0;
}

// --json answers "exit 0, errors: [...]" when the controller cannot be asked.
void throw_json_errors(const json& doc) {
  auto it = doc.find("errors");
  if (it == doc.end() || !it->is_array() || it->empty()) return;
  const json& e = it->front();
  auto text = [&e](const char* key) {
    auto v = e.find(key);
    return v != e.end() && v->is_string() ? v->get<std::string>() : std::string();
  };
  std::string what = text("description");
  std::string detail = text("error");
  std::string source = text("source");
  if (what.empty()) what = detail, detail.clear();
  if (!source.empty()) detail = source + (detail.empty() ? "" : ": " + detail);
  std::string msg = detail.empty() ? what : what + " (" + detail + ")";
  // 22.05 says only "Unspecified error" when slurmctld does not answer.
  if (msg.find("Unspecified error") != std::string::npos) msg += "; is slurmctld up? try `scontrol ping`";
  throw SlurmAnswerError(msg);
}

json parse_document(const std::string& text, const std::string& command) {
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    throw SlurmFormatError(fmt::format("cannot read {}: not JSON ({})", command, e.what()));
  }
}

}  // namespace slurm_json

}  // namespace ddpctl
