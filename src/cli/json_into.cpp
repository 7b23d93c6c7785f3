#include "cli/json_into.hpp"

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>

#include "base/diagnostics.hpp"

namespace ddpctl::cli {

namespace {
std::unique_ptr<JsonInto>& the_json_into() {
  static std::unique_ptr<JsonInto> into;
  return into;
}
}  // namespace

JsonInto::JsonInto(const std::string& file) : file_(file), out_(file, std::ios::app) {
  if (!out_) throw UserError(Location{"--json-into"}, "", fmt::format("{}: cannot be written", file));
  // The runs this command makes: followed from their first event.
  observer_ = add_event_observer([this](const std::string& run_dir, const nlohmann::json&) { follow(run_dir, true); });
  thread_ = std::thread([this] { loop(); });
}

JsonInto::~JsonInto() { finish(); }

void JsonInto::follow(const std::string& run_dir, bool from_start) {
  const std::string id = std::filesystem::path(run_dir).filename().string();
  std::lock_guard<std::mutex> lock(mutex_);
  if (runs_.count(id)) return;
  EventPosition at;
  if (!from_start) {
    at.seq = last_event_seq(run_dir);
    at.offset = at.seq ? offset_after(run_dir, at.seq).value_or(0) : 0;
    at.origin = event_log_origin(run_dir);
  }
  runs_[id] = {run_dir, at};
}

void JsonInto::loop() {
  while (!stop_) {
    drain();
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
}

void JsonInto::drain() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& [id, run] : runs_) {
    for (;;) {
      EventsRead r = read_events(run.first, run.second.offset, 1 << 20);
      for (size_t i = 0; i < r.events.size(); ++i) {
        run.second.seq = r.events[i]["seq"].get<long long>();
        if (!run.second.origin) run.second.origin = std::llround(r.events[i].value("t", 0.0) * 1000);
        run.second.offset = r.ends[i];
        EventCursor c;
        for (const auto& [other, o] : runs_) c[other] = o.second;
        nlohmann::json line = r.events[i];
        line["cursor"] = encode_cursor(c);
        out_ << line.dump() << '\n';
      }
      const bool more = r.next_offset > run.second.offset;
      run.second.offset = std::max(run.second.offset, r.next_offset);
      if (!more || r.events.empty()) break;
    }
  }
  out_.flush();
}

void JsonInto::finish() {
  if (observer_) remove_event_observer(observer_), observer_ = 0;
  if (thread_.joinable()) {
    stop_ = true;
    thread_.join();
  }
  drain();
}

void start_json_into(const std::string& file) { the_json_into() = std::make_unique<JsonInto>(file); }

JsonInto* json_into() { return the_json_into().get(); }

void finish_json_into() {
  if (the_json_into()) the_json_into()->finish(), the_json_into().reset();
}

}  // namespace ddpctl::cli
