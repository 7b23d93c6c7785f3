#include "sites/site_answer.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/text.hpp"
#include "runs/events.hpp"
#include "slurm/slurm_job.hpp"

namespace ddpctl {

namespace {

// An answer that is not as the gate writes it: why, for "not reached: ...".
struct BadAnswer {
  std::string why;
};

// The most of one list a gate writes: a run's jobs, a round's events.
constexpr size_t kMostItems = 10000;

bool plain_run_id(const std::string& id) {
  if (id.empty() || id.size() > 200 || id[0] == '.' || id[0] == '-') return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
           c == '-';
  });
}

bool plain_label(const std::string& s) {
  return s.size() <= 100 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                  c == '_' || c == '-';
         });
}

const char* type_of(const nlohmann::json& v) {
  if (v.is_null()) return "null";
  if (v.is_string()) return "a string";
  if (v.is_boolean()) return "true or false";
  if (v.is_number()) return "a number";
  if (v.is_array()) return "a list";
  return "an object";
}

[[noreturn]] void bad(const std::string& field, const std::string& want, const nlohmann::json& got) {
  throw BadAnswer{fmt::format("its answer's {} is {}, not {}", field, type_of(got), want)};
}

// The field `key` of `o` when it is there (absent: nullptr); a field of
// another type than the gate writes is a BadAnswer.
const nlohmann::json* field(const nlohmann::json& o, const std::string& key, const std::string& where,
                            bool (nlohmann::json::*is)() const noexcept, const char* want) {
  auto it = o.find(key);
  if (it == o.end()) return nullptr;
  if (!((*it).*is)()) bad(where + key, want, *it);
  return &*it;
}

std::string text_field(const nlohmann::json& o, const std::string& key, const std::string& where) {
  const nlohmann::json* v = field(o, key, where, &nlohmann::json::is_string, "a string");
  return v ? v->get<std::string>() : std::string();
}

std::string job_id_field(const nlohmann::json& o, const std::string& key, const std::string& where) {
  std::string id = text_field(o, key, where);
  if (!is_slurm_job_id(id))
    throw BadAnswer{fmt::format("its answer's {}{} is {}, not a Slurm job id", where, key, printable(id, 40))};
  return id;
}

std::string label_field(const nlohmann::json& o, const std::string& where) {
  std::string label = text_field(o, "label", where);
  if (!plain_label(label))
    throw BadAnswer{fmt::format("its answer's {}label is {}, not a shape's label", where, printable(label, 40))};
  return label;
}

double time_field(const nlohmann::json& o, const std::string& key, const std::string& where) {
  const nlohmann::json* v = field(o, key, where, &nlohmann::json::is_number, "a number");
  if (!v) return 0;
  double t = v->get<double>();
  if (!std::isfinite(t) || t < 0 || t > 1e11)
    throw BadAnswer{fmt::format("its answer's {}{} is {}, not a time", where, key, v->dump())};
  return t;
}

const nlohmann::json& list_field(const nlohmann::json& o, const std::string& key) {
  static const nlohmann::json empty = nlohmann::json::array();
  const nlohmann::json* v = field(o, key, "", &nlohmann::json::is_array, "a list");
  if (!v) return empty;
  if (v->size() > kMostItems) throw BadAnswer{fmt::format("its answer's {} has {} items", key, v->size())};
  return *v;
}

const nlohmann::json& object_at(const nlohmann::json& list, size_t i, const std::string& key) {
  if (!list[i].is_object()) bad(fmt::format("{}[{}]", key, i), "an object", list[i]);
  return list[i];
}

std::vector<RaceEvent> events_of(const nlohmann::json& o, const std::string& key) {
  std::vector<RaceEvent> out;
  const nlohmann::json& list = list_field(o, key);
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string where = fmt::format("{}[{}].", key, i);
    const nlohmann::json& e = object_at(list, i, key);
    RaceEvent r;
    r.job_id = job_id_field(e, "job", where);
    r.label = label_field(e, where);
    r.at = time_field(e, "at", where);
    if (const nlohmann::json* a = field(e, "attempt", where, &nlohmann::json::is_number_integer, "a whole number")) {
      long long n = a->get<long long>();
      if (n < 0 || n > 100000) throw BadAnswer{fmt::format("its answer's {}attempt is {}", where, n)};
      r.attempt = static_cast<int>(n);
    }
    out.push_back(r);
  }
  return out;
}

SiteJob job_of(const nlohmann::json& list, size_t i) {
  const std::string where = fmt::format("jobs[{}].", i);
  const nlohmann::json& e = object_at(list, i, "jobs");
  SiteJob j;
  j.id = job_id_field(e, "job", where);
  j.label = label_field(e, where);
  j.state = text_field(e, "state", where);
  if (!j.state.empty() && j.state != "UNKNOWN" && !parse_job_state(j.state))
    throw BadAnswer{fmt::format("its answer's {}state is {}, not a state of Slurm's", where, printable(j.state, 40))};
  j.reason = plain_line(text_field(e, "reason", where), 200);
  if (const nlohmann::json* v = field(e, "ended", where, &nlohmann::json::is_boolean, "true or false"))
    j.ended = v->get<bool>();
  return j;
}

// A site's event: an object with its seq, a type ddpctl knows, a finite
// time, and no more than kEventBytes; anything else is a BadAnswer.
constexpr size_t kEventBytes = 16 << 10;
constexpr size_t kEventsPerAnswer = 1000;

void read_site_events(const nlohmann::json& j, SitePoll& poll) {
  const nlohmann::json& list = list_field(j, "events");
  if (list.size() > kEventsPerAnswer) throw BadAnswer{fmt::format("its answer holds {} events", list.size())};
  long long last = 0;
  for (size_t i = 0; i < list.size(); ++i) {
    const nlohmann::json& e = object_at(list, i, "events");
    const std::string where = fmt::format("events[{}].", i);
    const nlohmann::json* seq = field(e, "seq", where, &nlohmann::json::is_number_integer, "a whole number");
    if (!seq || seq->get<long long>() <= last)
      throw BadAnswer{fmt::format("its answer's {}seq is missing or not after the one before", where)};
    last = seq->get<long long>();
    const nlohmann::json* type = field(e, "type", where, &nlohmann::json::is_string, "a string");
    if (!type || !parse_event_type(type->get<std::string>()))
      throw BadAnswer{fmt::format("its answer's {}type is no event type: {}", where,
                                  type ? printable(type->get<std::string>(), 40) : std::string("none"))};
    if (!e.contains("t")) throw BadAnswer{fmt::format("its answer's {}t is missing", where)};
    time_field(e, "t", where);
    if (e.dump().size() > kEventBytes) throw BadAnswer{fmt::format("its answer's {} is over 16 KiB", where.substr(0, where.size() - 1))};
    poll.events.push_back(e);
  }
  if (const nlohmann::json* more = field(j, "events_more", "", &nlohmann::json::is_boolean, "true or false"))
    poll.events_more = more->get<bool>();
}

void read_fields(const nlohmann::json& j, SitePoll& poll) {
  const nlohmann::json& run = j["run"];
  if (!run.is_null() && !run.is_string()) bad("run", "a run id or null", run);
  if (run.is_string() && !plain_run_id(run.get<std::string>()))
    throw BadAnswer{"its answer names a run that is not a run id: " + printable(run.get<std::string>(), 80)};
  poll.submitted = run.is_string();
  if (!poll.submitted) return;
  poll.run = run.get<std::string>();
  const nlohmann::json& jobs = list_field(j, "jobs");
  for (size_t i = 0; i < jobs.size(); ++i) poll.jobs.push_back(job_of(jobs, i));
  poll.at_gate = events_of(j, "at_gate");
  poll.passed = events_of(j, "passed");
  poll.timeouts = events_of(j, "timeouts");
  if (const nlohmann::json* g = field(j, "grant", "", &nlohmann::json::is_object, "an object"))
    poll.grant = job_id_field(*g, "job", "grant.");
  if (const nlohmann::json* s = field(j, "stand_down", "", &nlohmann::json::is_string, "a string"))
    poll.stood_down = s != nullptr;
  poll.error = plain_line(text_field(j, "error", ""), 300);
  if (const nlohmann::json* r = field(j, "round", "", &nlohmann::json::is_number_integer, "a whole number")) {
    long long n = r->get<long long>();
    if (n < 1 || n > 1000) throw BadAnswer{fmt::format("its answer's round is {}", n)};
    poll.round = static_cast<int>(n);
  }
  std::string opened = text_field(j, "round_opened", "");
  if (!opened.empty() && opened != "job" && opened != "coordinator")
    throw BadAnswer{"its answer's round_opened is " + printable(opened, 40)};
  poll.round_opened = opened;
  poll.site = text_field(j, "site", "");
  read_site_events(j, poll);
}

}  // namespace

bool read_site_answer(const std::string& text, SitePoll& poll) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("coordinator")) {
    poll.error = "its answer is not the gate's JSON";
    return false;
  }
  SitePoll read;
  read.name = poll.name;
  read.submission_ended = poll.submission_ended;
  read.submission_failed = poll.submission_failed;
  try {
    if (!j["coordinator"].is_string()) bad("coordinator", "a string", j["coordinator"]);
    read_fields(j, read);
  } catch (const BadAnswer& e) {
    poll.error = e.why;
    return false;
  }
  read.reached = true;
  poll = std::move(read);
  return true;
}

std::vector<std::string> cancelled_jobs_of(const std::string& text) {
  std::vector<std::string> ids;
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object() || !j.contains("cancelled") || !j["cancelled"].is_array()) return ids;
  for (const auto& id : j["cancelled"])
    if (id.is_string() && is_slurm_job_id(id.get<std::string>()) && ids.size() < kMostItems)
      ids.push_back(id.get<std::string>());
  return ids;
}

}  // namespace ddpctl
