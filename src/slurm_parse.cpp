// Parsers for what Slurm prints: squeue/sinfo/scontrol --json of every data
// parser generation from 22.05 to 24.11 (slurm_parse.hpp says which differ
// how), squeue's format string, sacct -P, GRES and TRES strings.
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <algorithm>
#include <set>
#include <sstream>

#include "slurm_parse.hpp"
#include "text.hpp"
#include "values.hpp"

namespace ddpctl {

namespace {

using nlohmann::json;

// "2026-11-22T08:11:57" in local time; "N/A", "Unknown", "None": none.
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

}  // namespace

std::map<std::string, int> parse_gres(const std::string& gres) {
  std::map<std::string, int> out;
  // Split on commas outside parentheses: "gpu:a100:4(S:0-1),gpu:v100:2".
  std::vector<std::string> items;
  std::string cur;
  int depth = 0;
  for (char c : gres) {
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c == ',' && depth == 0) {
      items.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  items.push_back(cur);
  for (std::string item : items) {
    if (auto paren = item.find('('); paren != std::string::npos) item.erase(paren);
    // squeue -o %b: "gres:gpu:a100:4" (22.05), "gres/gpu:a100:4" (24.11).
    if (item.rfind("gres:", 0) == 0 || item.rfind("gres/", 0) == 0) item.erase(0, 5);
    auto parts = split(item, ':');
    if (parts.empty() || parts[0] != "gpu") continue;
    if (parts.size() == 1) {
      out[""] += 1;
    } else if (parts.size() == 2) {
      if (is_decimal_number(parts[1]))
        out[""] += to_int(parts[1]);
      else
        out[parts[1]] += 1;
    } else {
      out[parts[1]] += to_int(parts[2]);
    }
  }
  return out;
}

int gpus_in_tres(const std::string& tres) {
  int n = 0;
  for (const auto& item : split(tres, ',')) {
    auto eq = item.find('=');
    if (eq == std::string::npos) continue;
    std::string key = item.substr(0, eq);
    // "gres/gpu=4" counts; "gres/gpu:a100=4" repeats it by type.
    if (key == "gres/gpu") n = to_int(item.substr(eq + 1));
  }
  return n;
}

namespace {

// Slurm's own order (job_state_string): a flag names the state over the base.
const char* const kStateFlagsFirst[] = {"COMPLETING", "STAGE_OUT",    "CONFIGURING",  "RESIZING",
                                        "REQUEUED",   "REQUEUE_FED",  "REQUEUE_HOLD", "SPECIAL_EXIT",
                                        "STOPPED",    "REVOKED",      "RESV_DEL_HOLD", "SIGNALING"};

bool is_state_flag(const std::string& name) {
  for (const char* f : kStateFlagsFirst)
    if (name == f) return true;
  return false;
}

// A state as read: a name ddpctl does not know becomes Unknown, with the name
// kept in the reason so that nothing Slurm said is hidden.
void set_state(Job& job, const std::string& name) {
  if (auto s = parse_job_state(name)) {
    job.state = *s;
    if (is_state_flag(name)) job.flags.push_back(name);
    // sacct: "CANCELLED by 1234".
    if (auto by = name.find(" by "); by != std::string::npos) job.cancelled_by = name.substr(by + 4);
  } else {
    job.state = JobState::Unknown;
    if (!name.empty()) job.reason = "Slurm reports state " + name;
  }
}

// 23.11 and later: ["PENDING", "REQUEUED"], the base state first, then flags.
void set_state(Job& job, const std::vector<std::string>& names) {
  if (names.empty()) return set_state(job, std::string());
  std::string effective = names.front();
  for (size_t i = 1; i < names.size(); ++i) job.flags.push_back(names[i]);
  for (const char* f : kStateFlagsFirst)
    if (std::find(job.flags.begin(), job.flags.end(), f) != job.flags.end()) {
      effective = f;
      break;
    }
  std::vector<std::string> flags = job.flags;
  set_state(job, effective);
  job.flags = flags;
}

}  // namespace

namespace {

// The data parser of a --json document, and its fields read by the shapes
// that parser writes (slurm_parse.hpp).
class Reader {
 public:
  Reader(const json& doc, const std::string& command) : src_(json_source(doc, command)), command_(command) {}
  const JsonSource& source() const { return src_; }
  bool flag_arrays() const { return src_.parser >= 40; }

  // A string field; absent or null is empty.
  std::string str(const json& o, const char* key, const std::string& where) const {
    auto it = o.find(key);
    if (it == o.end() || it->is_null()) return "";
    if (!it->is_string()) bad(where, key, "a string", *it);
    return it->get<std::string>();
  }
  // A plain integer field; absent or null is 0.
  long long integer(const json& o, const char* key, const std::string& where) const {
    auto it = o.find(key);
    if (it == o.end() || it->is_null()) return 0;
    if (!it->is_number_integer()) bad(where, key, "an integer", *it);
    return it->get<long long>();
  }
  // {set, infinite, number}: the number when set and finite.
  std::optional<long long> wrapped(const json& o, const char* key, const std::string& where) const {
    auto it = o.find(key);
    if (it == o.end() || it->is_null()) return std::nullopt;
    if (!it->is_object() || !it->contains("number")) bad(where, key, "a {set, infinite, number} object", *it);
    if (!it->value("set", false) || it->value("infinite", false)) return std::nullopt;
    const json& n = (*it)["number"];
    if (!n.is_number_integer()) bad(where, std::string(key) + ".number", "an integer", n);
    return n.get<long long>();
  }
  // A number that is plain up to `last_plain` and wrapped from then on.
  std::optional<long long> number(const json& o, const char* key, const std::string& where, int last_plain) const {
    if (src_.parser > last_plain) return wrapped(o, key, where);
    return integer(o, key, where);
  }
  // A time: 0 and unset are unknown.
  std::optional<long long> time(const json& o, const char* key, const std::string& where) const {
    auto t = number(o, key, where, 39);
    if (t && *t > 0) return t;
    return std::nullopt;
  }
  // A list of strings: an array, or (before 23.02's node records) a comma list.
  std::vector<std::string> strings(const json& o, const char* key, const std::string& where) const {
    std::vector<std::string> out;
    auto it = o.find(key);
    if (it == o.end() || it->is_null()) return out;
    if (it->is_string()) {
      for (const auto& part : split(it->get<std::string>(), ','))
        if (!part.empty()) out.push_back(part);
      return out;
    }
    if (!it->is_array()) bad(where, key, "an array of strings", *it);
    for (const auto& e : *it) {
      if (!e.is_string()) bad(where, key, "an array of strings", *it);
      out.push_back(e.get<std::string>());
    }
    return out;
  }
  // The array `key` of the document.
  const json& list(const json& doc, const char* key) const {
    auto it = doc.find(key);
    if (it == doc.end() || !it->is_array()) bad("", key, "an array", it == doc.end() ? json() : *it);
    return *it;
  }

  [[noreturn]] void bad(const std::string& where, const std::string& key, const char* expected, const json& got) const {
    std::string kind = got.is_null() ? "missing" : std::string("a ") + got.type_name();
    throw SlurmFormatError(fmt::format("cannot read {} of {}: {}{} should be {} but is {}; ddpctl reads Slurm 22.05 "
                                       "to 26.05 (data parsers v0.0.38 to v0.0.45)",
                                       command_, src_.describe(), where.empty() ? "" : where + ".", key, expected,
                                       kind));
  }

 private:
  JsonSource src_;
  std::string command_;
};

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

NodeInfo read_node(const Reader& r, const json& n, const std::string& where) {
  NodeInfo node;
  node.name = r.str(n, "name", where);
  node.partitions = r.strings(n, "partitions", where);
  node.features = r.strings(n, "active_features", where);
  if (node.features.empty()) node.features = r.strings(n, "features", where);
  node.gpus_by_type = parse_gres(r.str(n, "gres", where));
  node.cpus = static_cast<int>(r.integer(n, "cpus", where));
  node.memory_mib = r.integer(n, "real_memory", where);
  std::vector<std::string> state = r.flag_arrays() ? r.strings(n, "state", where)
                                                    : std::vector<std::string>{r.str(n, "state", where)};
  for (const auto& s : state) node.state += (node.state.empty() ? "" : "+") + s;
  return node;
}

}  // namespace

std::string JsonSource::describe() const {
  std::string slurm = release.empty() ? "Slurm (release not given)" : "Slurm " + release;
  return parser ? fmt::format("{} (data_parser v0.0.{})", slurm, parser) : slurm;
}

JsonSource json_source(const json& doc, const std::string& command) {
  JsonSource src;
  const json* meta = doc.contains("meta") && doc["meta"].is_object() ? &doc["meta"] : nullptr;
  if (!meta) throw SlurmFormatError(fmt::format("cannot read {}: it has no \"meta\" saying which Slurm wrote it", command));
  // 22.05: meta.Slurm.release and meta.plugin.type "openapi/v0.0.38";
  // 23.02: meta.Slurm and meta.plugins.data_parser; 23.11+: meta.slurm and
  // meta.plugin.data_parser ("data_parser/v0.0.42").
  for (const char* key : {"slurm", "Slurm"})
    if (auto it = meta->find(key); it != meta->end() && it->is_object()) {
      auto rel = it->find("release");
      if (rel != it->end() && rel->is_string()) src.release = rel->get<std::string>();
    }
  std::string plugin;
  for (const char* group : {"plugin", "plugins"})
    if (auto it = meta->find(group); it != meta->end() && it->is_object())
      for (const char* key : {"data_parser", "type"})
        if (auto v = it->find(key); plugin.empty() && v != it->end() && v->is_string() && !v->get<std::string>().empty())
          plugin = v->get<std::string>();
  auto at = plugin.rfind("v0.0.");
  if (at != std::string::npos) src.parser = std::atoi(plugin.c_str() + at + 5);
  if (src.parser < 37)
    throw SlurmFormatError(fmt::format("cannot read {} of {}: its meta names no data parser ddpctl knows ({}); "
                                       "ddpctl reads Slurm 22.05 to 26.05 (data parsers v0.0.38 to v0.0.45)",
                                       command, src.describe(), plugin.empty() ? "none" : "\"" + plugin + "\""));
  return src;
}

bool sinfo_lists_nodes(const JsonSource& source) { return source.parser <= 38; }

std::vector<Job> parse_squeue_json(const std::string& text) {
  // A busy cluster's queue is tens of MiB; keep only the fields read below
  // (a job has ~100), which cuts the parse's memory and time severalfold.
  static const std::set<std::string> kept = {
      "job_id", "name", "comment", "job_state", "state_reason", "state_description", "partition", "account", "nodes",
      "current_working_directory", "submit_time", "start_time", "end_time", "time_limit", "node_count",
      "tres_alloc_str", "tres_req_str", "restart_cnt", "exit_code"};
  bool in_jobs = false;
  json::parser_callback_t keep = [&in_jobs](int depth, json::parse_event_t event, json& parsed) {
    if (event != json::parse_event_t::key) return true;
    if (depth == 1) {
      in_jobs = parsed == "jobs";
      return in_jobs || parsed == "errors" || parsed == "meta";
    }
    if (depth == 3 && in_jobs) return kept.count(parsed.get<std::string>()) > 0;
    return true;
  };
  json doc;
  try {
    doc = json::parse(text, keep);
  } catch (const json::exception& e) {
    throw SlurmFormatError(std::string("cannot read squeue --json: not JSON (") + e.what() + ")");
  }
  throw_json_errors(doc);
  Reader r(doc, "squeue --json");
  std::vector<Job> jobs;
  const json& list = r.list(doc, "jobs");
  for (size_t i = 0; i < list.size(); ++i) {
    const json& j = list[i];
    std::string at = fmt::format("jobs[{}]", i);
    Job job;
    job.id = std::to_string(r.integer(j, "job_id", at));
    job.name = r.str(j, "name", at);
    job.comment = r.str(j, "comment", at);
    job.reason = r.str(j, "state_reason", at);
    if (r.flag_arrays())
      set_state(job, r.strings(j, "job_state", at));
    else
      set_state(job, r.str(j, "job_state", at));
    // As squeue's %r: the description when Slurm set one, which says more
    // ("ReqNodeNotAvail, Reserved for maintenance", where state_reason may
    // still say "Reservation"); reasons.hpp reads the detail.
    if (job.state == JobState::Pending && j.contains("state_description") && j["state_description"].is_string() &&
        !j["state_description"].get<std::string>().empty())
      job.reason = j["state_description"].get<std::string>();
    job.partition = r.str(j, "partition", at);
    job.account = r.str(j, "account", at);
    job.nodes = r.str(j, "nodes", at);
    job.cwd = r.str(j, "current_working_directory", at);
    job.submit_time = r.time(j, "submit_time", at);
    job.start_time = r.time(j, "start_time", at);
    job.end_time = r.time(j, "end_time", at);
    if (auto limit = r.number(j, "time_limit", at, 38)) job.time_limit_s = *limit * 60;
    job.node_count = static_cast<int>(r.number(j, "node_count", at, 38).value_or(0));
    std::string alloc = r.str(j, "tres_alloc_str", at);
    job.gpus = gpus_in_tres(alloc.empty() ? r.str(j, "tres_req_str", at) : alloc);
    job.restarts = static_cast<int>(r.integer(j, "restart_cnt", at));
    if (r.flag_arrays()) {
      // {"status": ["SIGNALED"], "return_code": {...}, "signal": {"id": {...}, "name": "KILL"}}
      auto it = j.find("exit_code");
      if (it != j.end() && !it->is_null()) {
        if (!it->is_object()) r.bad(at, "exit_code", "a {status, return_code, signal} object", *it);
        if (auto code = r.wrapped(*it, "return_code", at + ".exit_code")) job.exit.code = static_cast<int>(*code);
        if (auto sig = it->find("signal"); sig != it->end() && sig->is_object())
          if (auto id = r.wrapped(*sig, "id", at + ".exit_code.signal")) job.exit.signal = static_cast<int>(*id);
        if (job.exit.signal) job.exit.code.reset();
      }
    } else {
      job.exit = exit_from_wait_status(r.integer(j, "exit_code", at));
    }
    job.source = "squeue";
    jobs.push_back(std::move(job));
  }
  return jobs;
}

// Fields of kSqueueFormat, separated by the ASCII unit separator.
std::vector<Job> parse_squeue_format(const std::string& text) {
  std::vector<Job> jobs;
  for (const auto& line : split(text, '\n')) {
    auto f = split(line, '\x1f');
    if (f.size() < 15) continue;
    Job job;
    job.id = f[0];
    job.name = f[1];
    job.comment = f[2] == "(null)" ? "" : f[2];
    job.reason = f[4];
    set_state(job, f[3]);
    job.submit_time = parse_slurm_date(f[5]);
    job.start_time = parse_slurm_date(f[6]);
    job.end_time = parse_slurm_date(f[7]);
    job.time_limit_s = parse_limit(f[8]);
    job.nodes = f[9];
    job.node_count = to_int(f[10]);
    int per_node = 0;
    for (const auto& [type, n] : parse_gres(f[11])) per_node += n;
    job.gpus = per_node * std::max(job.node_count, 1);
    job.partition = f[12];
    job.account = f[13];
    job.cwd = f[14];
    job.restarts = f.size() > 15 ? to_int(f[15]) : 0;
    job.source = "squeue";
    jobs.push_back(std::move(job));
  }
  return jobs;
}

// sacct -X -n -P -o with the fields of kSacctFormat.
std::vector<Job> parse_sacct(const std::string& text) {
  std::vector<Job> jobs;
  for (const auto& line : split(text, '\n')) {
    auto f = split(line, '|');
    if (f.size() < 16) continue;
    Job job;
    job.id = f[0];
    job.name = f[1];
    job.comment = f[2];
    job.reason = f[4];
    set_state(job, f[3]);
    job.partition = f[5];
    job.account = f[6];
    job.nodes = f[7] == "None assigned" ? "" : f[7];
    job.submit_time = parse_slurm_date(f[8]);
    job.start_time = parse_slurm_date(f[9]);
    job.end_time = parse_slurm_date(f[10]);
    if (int minutes = to_int(f[11]); minutes > 0) job.time_limit_s = minutes * 60LL;
    job.node_count = to_int(f[12]);
    job.gpus = gpus_in_tres(f[13].empty() ? f[14] : f[13]);
    job.exit = exit_from_sacct(f[15]);
    job.cwd = f.size() > 16 ? f[16] : "";
    job.source = "sacct";
    jobs.push_back(std::move(job));
  }
  return jobs;
}

std::vector<NodeInfo> parse_sinfo_json(const std::string& text) {
  json doc = parse_document(text, "sinfo --json");
  throw_json_errors(doc);
  Reader r(doc, "sinfo --json");
  if (!sinfo_lists_nodes(r.source()))
    throw SlurmFormatError(fmt::format("sinfo --json of {} lists node groups, not nodes: ask `scontrol show nodes "
                                       "--json` for them",
                                       r.source().describe()));
  std::vector<NodeInfo> nodes;
  const json& list = r.list(doc, "nodes");
  for (size_t i = 0; i < list.size(); ++i) nodes.push_back(read_node(r, list[i], fmt::format("nodes[{}]", i)));
  return nodes;
}

std::vector<NodeInfo> parse_scontrol_nodes_json(const std::string& text) {
  json doc = parse_document(text, "scontrol show nodes --json");
  throw_json_errors(doc);
  Reader r(doc, "scontrol show nodes --json");
  std::vector<NodeInfo> nodes;
  const json& list = r.list(doc, "nodes");
  for (size_t i = 0; i < list.size(); ++i) nodes.push_back(read_node(r, list[i], fmt::format("nodes[{}]", i)));
  return nodes;
}

}  // namespace ddpctl
