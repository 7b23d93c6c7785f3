#include "runs/in_job_record.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "base/files.hpp"
#include "base/text.hpp"
#include "runs/job_files.hpp"

namespace ddpctl {

std::string in_job_record_path(const std::string& log_base, int attempt) {
  return job_files::in_job_restarts(log_base, attempt);
}

std::string in_job_resumed_path(const std::string& log_base, int attempt, int restart) {
  return fmt::format("{}.restart{}.in-job.resumed{}.json", log_base, attempt, restart);
}

std::string in_job_progress_path(const std::string& log_base, int attempt, int step) {
  return fmt::format("{}.restart{}.in-job.progress{}.json", log_base, attempt, step);
}

std::optional<double> read_in_job_progress(const std::string& log_base, int attempt, int step) {
  try {
    auto j = nlohmann::json::parse(read_file(in_job_progress_path(log_base, attempt, step), 4096), nullptr, false);
    if (j.is_object() && j.contains("at") && j["at"].is_number() && j["at"].get<double>() > 0) return j["at"].get<double>();
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

nlohmann::json in_job_record_json(const InJobRecord& r) {
  nlohmann::json restarts = nlohmann::json::array();
  for (const auto& x : r.restarts) {
    restarts.push_back({{"number", x.number}, {"kind", step_failure_kind_name(x.kind)}, {"cause", x.cause},
                        {"text", x.text}, {"failed", x.failed}, {"left_out", x.left_out}, {"taken", x.taken},
                        {"nodes", x.nodes}, {"step_rc", x.step_rc}, {"decided_at", x.decided_at},
                        {"started_at", x.started_at}});
    if (x.last_progress_at > 0) restarts.back()["last_progress_at"] = x.last_progress_at;
  }
  nlohmann::json j = {{"attempt", r.attempt}, {"of", r.of}, {"restarts", restarts}};
  if (r.full_nodes > 0) j["full_nodes"] = r.full_nodes;
  if (!r.fallback.empty()) j["fallback"] = {{"action", r.fallback}, {"why", r.fallback_why}};
  return j;
}

std::optional<InJobRecord> parse_in_job_record(const std::string& text) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  try {
    InJobRecord r;
    r.attempt = j.value("attempt", 0);
    r.of = j.value("of", 0);
    r.full_nodes = j.value("full_nodes", 0);
    for (const auto& x : j.value("restarts", nlohmann::json::array())) {
      InJobRestart e;
      e.number = x.value("number", 1);
      e.kind = parse_step_failure_kind(x.value("kind", ""));
      e.cause = x.value("cause", "");
      e.text = x.value("text", "");
      e.failed = x.value("failed", std::vector<std::string>{});
      e.left_out = x.value("left_out", std::vector<std::string>{});
      e.taken = x.value("taken", std::vector<std::string>{});
      e.nodes = x.value("nodes", std::vector<std::string>{});
      e.step_rc = x.value("step_rc", 0);
      e.decided_at = x.value("decided_at", 0.0);
      e.started_at = x.value("started_at", 0.0);
      e.last_progress_at = x.value("last_progress_at", 0.0);
      r.restarts.push_back(e);
    }
    if (j.contains("fallback") && j["fallback"].is_object()) {
      r.fallback = j["fallback"].value("action", "");
      r.fallback_why = j["fallback"].value("why", "");
    }
    return r;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

std::optional<InJobRecord> read_in_job_record(const std::string& log_base, int attempt) {
  std::optional<InJobRecord> r;
  try {
    r = parse_in_job_record(read_file(in_job_record_path(log_base, attempt), 1 << 20));
  } catch (const std::exception&) {
    return std::nullopt;
  }
  // Where each restarted step resumed (the watchdog writes it apart, so that
  // the record has one writer at a time).
  if (r)
    for (auto& x : r->restarts) {
      if (x.started_at <= 0) continue;
      try {
        auto j = nlohmann::json::parse(read_file(in_job_resumed_path(log_base, attempt, x.number), 4096), nullptr, false);
        if (!j.is_object() || !j.contains("epoch")) continue;
        double epoch = j.value("epoch", 0.0);
        long long step = j.value("step", -1LL);
        x.resumed = step >= 0 ? fmt::format("epoch {:g} step {}", epoch, step) : fmt::format("epoch {:g}", epoch);
        x.resumed_at = j.value("at", 0.0);
        if (j.contains("from") && j["from"].is_string()) x.resumed_from = j["from"].get<std::string>();
      } catch (const std::exception&) {
      }
    }
  return r;
}

std::string describe_in_job(const InJobRecord& r) {
  std::vector<std::string> parts;
  if (!r.restarts.empty()) {
    const InJobRestart& last = r.restarts.back();
    parts.push_back(fmt::format("restart {} of {} in the job: {}{}{}{}", last.number, r.of, last.text,
                                last.started_at > 0 ? "" : " (starting)",
                                last.resumed.empty() ? "" : "; training again at " + last.resumed,
                                last.resumed_from.empty() ? "" : ", resumed from " + last.resumed_from));
  }
  if (!r.fallback.empty()) parts.push_back(r.fallback_why);
  return join(parts, "; ");
}

InJobHistory read_in_job_history(const std::string& log_base) {
  InJobHistory h;
  for (int attempt = 0; attempt < 64; ++attempt) {
    std::optional<InJobRecord> r = read_in_job_record(log_base, attempt);
    if (!r) continue;
    for (const auto& x : r->restarts) {
      ++h.count;
      std::string gap = "not started";
      // From the last progress before the failure where the watchdog saw
      // one: what Slurm took to notice a lost node (up to SlurmdTimeout)
      // is lost too.
      bool from_progress = x.last_progress_at > 0 && x.last_progress_at <= x.decided_at;
      double from = from_progress ? x.last_progress_at : x.decided_at;
      std::string before =
          from_progress ? fmt::format("; {:.1f} s of it from the last progress to the step's end", x.decided_at - from) : "";
      if (x.resumed_at > 0 && x.decided_at > 0) {
        double s = std::max(0.0, x.resumed_at - from);
        h.lost_s += s;
        h.lost_by_attempt[attempt] += s;
        gap = fmt::format("training again after {:.1f} s ({}{})", s, x.resumed, before);
      } else if (x.started_at > 0 && x.decided_at > 0) {
        double s = std::max(0.0, x.started_at - from);
        h.lost_s += s;
        h.lost_by_attempt[attempt] += s;
        gap = fmt::format("new step after {:.1f} s (not yet seen training{})", s, before);
      }
      h.restarts.push_back(fmt::format("{}restart {} of {}: {}; {}", attempt > 0 ? fmt::format("attempt {}, ", attempt + 1) : "",
                                       x.number, r->of, x.text, gap));
      if (r->full_nodes > 0 && !x.nodes.empty() && static_cast<int>(x.nodes.size()) < r->full_nodes && !h.shrunk) {
        h.shrunk = true;
        h.shrunk_to = fmt::format("{} of {} nodes from restart {}", x.nodes.size(), r->full_nodes, x.number);
      }
    }
    if (!r->fallback.empty())
      h.restarts.push_back(fmt::format("{}then: {}", attempt > 0 ? fmt::format("attempt {}, ", attempt + 1) : "", r->fallback_why));
  }
  return h;
}

}  // namespace ddpctl
