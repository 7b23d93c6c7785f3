#include "cli/json_output.hpp"

#include <algorithm>
#include <iostream>

#include "base/json_document.hpp"
#include "runs/events.hpp"

namespace ddpctl::cli {

namespace {

JsonCapture*& current() {
  static JsonCapture* capture = nullptr;
  return capture;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

bool starts(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace

JsonCapture::JsonCapture(std::string kind, int major) : kind_(std::move(kind)), major_(major) {
  cout_ = std::cout.rdbuf(out_.rdbuf());
  tee_ = std::make_unique<Tee>(err_.rdbuf(), std::cerr.rdbuf());
  cerr_ = std::cerr.rdbuf(tee_.get());
  current() = this;
  observer_ = add_event_observer(&JsonCapture::on_event);
}

void JsonCapture::on_event(const std::string& run_dir, const nlohmann::json& event) {
  if (JsonCapture* c = current()) {
    std::lock_guard<std::mutex> lock(c->mutex_);
    c->events_.emplace_back(run_dir, event);
  }
}

void JsonCapture::add_event_facts(nlohmann::json& doc) const {
  std::lock_guard<std::mutex> lock(mutex_);
  nlohmann::json runs = nlohmann::json::array(), jobs = nlohmann::json::array(), cancelled = nlohmann::json::array();
  std::vector<std::string> seen;
  auto job_of = [](const nlohmann::json& e) {
    nlohmann::json j = nlohmann::json::object();
    for (const char* k : {"job", "run", "shape", "outcome", "array", "cluster", "cell", "reason"})
      if (e.contains(k)) j[k] = e[k];
    return j;
  };
  for (const auto& [dir, e] : events_) {
    const std::string run = e.value("run", "");
    if (std::find(seen.begin(), seen.end(), run) == seen.end()) {
      seen.push_back(run);
      runs.push_back({{"run", run}, {"dir", dir}});
    }
    const std::string type = e.value("type", "");
    if (type == "submitted") jobs.push_back(job_of(e));
    if (type == "cancel_asked") cancelled.push_back(job_of(e));
  }
  if (runs.empty()) return;
  if (!doc.contains("runs")) doc["runs"] = runs;
  if (!doc.contains("run") && runs.size() == 1) doc["run"] = runs[0]["run"], doc["dir"] = runs[0]["dir"];
  if (!doc.contains("jobs") && !jobs.empty()) doc["jobs"] = jobs;
  if (!doc.contains("cancelled") && !cancelled.empty()) doc["cancelled"] = cancelled;
}

JsonCapture::~JsonCapture() { restore(); }

void JsonCapture::restore() {
  if (cout_) std::cout.rdbuf(cout_), cout_ = nullptr;
  if (cerr_) std::cerr.rdbuf(cerr_), cerr_ = nullptr;
  if (current() == this) current() = nullptr;
  if (observer_) remove_event_observer(observer_), observer_ = 0;
}

void JsonCapture::fact(const std::string& key, const nlohmann::json& value) { facts_[key] = value; }

nlohmann::json JsonCapture::document(int exit_code, const std::vector<Diagnostic>& errors) const {
  nlohmann::json doc = errors.empty() ? json_document(kind_, major_) : error_document(errors, exit_code);
  nlohmann::json said = nlohmann::json::array();
  for (const auto& l : lines_of(out_.str())) said.push_back(l);
  for (const auto& l : lines_of(err_.str())) {
    if (starts(l, "ddpctl: warning: ")) doc["warnings"].push_back({{"message", l.substr(17)}, {"text", l.substr(17)}});
    else if (starts(l, "ddpctl: note: ")) doc["notes"].push_back(l.substr(14));
    else if (starts(l, "ddpctl: error: ") && errors.empty()) doc["errors"].push_back({{"message", l.substr(15)}, {"text", l.substr(15)}});
    else if (!starts(l, "ddpctl: error: ")) said.push_back(l);
  }
  if (!doc.contains("notes")) doc["notes"] = nlohmann::json::array();
  doc["said"] = said;
  for (auto it = facts_.begin(); it != facts_.end(); ++it)
    if (!doc.contains(it.key())) doc[it.key()] = it.value();
  add_event_facts(doc);
  if (exit_code != 0 && !doc.contains("exit")) doc["exit"] = exit_code;
  return doc;
}

void JsonCapture::finish(int exit_code, const std::vector<Diagnostic>& given) {
  std::vector<Diagnostic> errors = given;
  if (relayed_ && exit_code == 255 && errors.empty())
    errors.push_back(Diagnostic{Location{}, "", "ssh failed (exit status 255): the host could not be reached, or "
                                                "refused the login (ssh's words are on stderr)"});
  nlohmann::json doc = document(exit_code, errors);
  restore();
  if (relayed_ && exit_code != 255) return;
  // One document, indented as Slurm's --json is; a stream (emit) is one a line.
  if (!emitted_ || !errors.empty()) std::cout << doc.dump(2) << std::endl;
}

nlohmann::json JsonCapture::envelope() const {
  nlohmann::json doc = document(0, {});
  doc.erase("said");
  return doc;
}

void JsonCapture::emit(nlohmann::json doc) {
  emitted_ = true;
  std::ostream real(cout_ ? cout_ : std::cout.rdbuf());
  real << doc.dump() << std::endl;
}

JsonCapture* json_capture() { return current(); }

void json_fact(const std::string& key, const nlohmann::json& value) {
  if (JsonCapture* c = current()) c->fact(key, value);
}

}  // namespace ddpctl::cli
