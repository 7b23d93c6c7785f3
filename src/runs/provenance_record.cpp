#include "runs/provenance_record.hpp"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>

#include "base/files.hpp"
#include "base/json_fields.hpp"
#include "base/text.hpp"
#include "runs/job_files.hpp"

namespace ddpctl {

namespace fs = std::filesystem;

namespace {

// What a rendezvous, a shape or a snapshot sets differently in every job;
// and the Flight Recorder's paths, which the script puts under each
// attempt's log base (docs/running.md).
bool differs_by_design(const std::string& name) {
  static const std::vector<std::string> names = {"MASTER_ADDR",
                                                 "MASTER_PORT",
                                                 "WORLD_SIZE",
                                                 "NNODES",
                                                 "NPROC_PER_NODE",
                                                 "LOCAL_WORLD_SIZE",
                                                 "PYTHONPATH",
                                                 "TORCH_FR_DUMP_TEMP_FILE",
                                                 "TORCH_NCCL_DEBUG_INFO_TEMP_FILE",
                                                 "TORCH_NCCL_DEBUG_INFO_PIPE_FILE"};
  return name.rfind("DDPCTL_", 0) == 0 || std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

nlohmann::json provenance_json(const Provenance& e) {
  nlohmann::json env = nlohmann::json::object();
  for (const auto& [k, v] : e.env) env[k] = v;
  auto opt = [](const std::string& s) { return s.empty() ? nlohmann::json() : nlohmann::json(s); };
  return {{"job_id", e.job_id},      {"attempt", e.attempt},      {"t", e.t},
          {"nodes", e.nodes},        {"program", e.program},      {"program_path", opt(e.program_path)},
          {"script", opt(e.script)}, {"python", opt(e.python)},   {"torch", opt(e.torch)},
          {"torch_cuda", opt(e.torch_cuda)}, {"nccl", opt(e.nccl)}, {"gpu", opt(e.gpu)},
          {"driver", opt(e.driver)}, {"cuda_driver", opt(e.cuda_driver)}, {"modules", e.modules},
          {"env", env},              {"notes", e.notes},
          {"container", e.container.empty() ? nlohmann::json() : nlohmann::json{{"runtime", e.container}, {"image", e.image}}}};
}

std::optional<Provenance> parse_provenance(const std::string& text) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  Provenance e;
  auto str = [&](const char* key) {
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  auto strings = [&](const char* key) {
    std::vector<std::string> out;
    if (auto it = j.find(key); it != j.end() && it->is_array())
      for (const auto& v : *it)
        if (v.is_string()) out.push_back(v.get<std::string>());
    return out;
  };
  e.job_id = str("job_id");
  e.attempt = j.value("attempt", 0);
  e.t = j.value("t", 0.0);
  e.nodes = strings("nodes");
  e.program = str("program");
  e.program_path = str("program_path");
  e.script = str("script");
  e.python = str("python");
  e.torch = str("torch");
  e.torch_cuda = str("torch_cuda");
  e.nccl = str("nccl");
  e.gpu = str("gpu");
  e.driver = str("driver");
  e.cuda_driver = str("cuda_driver");
  e.modules = strings("modules");
  e.notes = strings("notes");
  if (auto it = j.find("container"); it != j.end() && it->is_object()) {
    e.container = it->value("runtime", "");
    e.image = it->value("image", "");
  }
  if (auto it = j.find("env"); it != j.end() && it->is_object())
    for (const auto& [k, v] : it->items())
      if (v.is_string()) e.env.emplace_back(k, v.get<std::string>());
  return e;
}

std::string provenance_path(const std::string& log_base, int attempt) {
  return job_files::provenance(log_base, attempt);
}

std::optional<Provenance> read_provenance(const std::string& log_base, int attempt) {
  std::string path = provenance_path(log_base, attempt);
  std::error_code ec;
  if (attempt < 0 || !fs::exists(path, ec)) return std::nullopt;
  try {
    auto e = parse_provenance(read_file(path, 1 << 20));
    if (e) e->attempt = attempt;  // the file's attempt, whatever its text says
    return e;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::optional<Provenance> read_latest_provenance(const std::string& log_base) {
  // A requeued job's attempts are few (requeue.max_restarts); look down from the newest.
  for (int a = 64; a >= 0; a--)
    if (auto e = read_provenance(log_base, a)) return e;
  return std::nullopt;
}

std::vector<std::pair<std::string, std::string>> comparable_fields(const Provenance& e) {
  std::vector<std::pair<std::string, std::string>> out;
  auto add = [&](const std::string& k, const std::string& v) {
    if (!v.empty()) out.emplace_back(k, v);
  };
  // A program in the snapshot: its place there (the snapshot's folder differs with the code, which diff shows apart).
  std::string program = e.program_path.empty() ? e.program : e.program_path;
  for (const auto& [k, v] : e.env)
    if (k == "DDPCTL_SNAPSHOT" && !v.empty() && program.rfind(v + "/", 0) == 0) program = "<snapshot>" + program.substr(v.size());
  add("program", program);
  add("python", e.python);
  add("torch", e.torch);
  add("torch CUDA", e.torch_cuda);
  add("NCCL", e.nccl);
  add("GPU", e.gpu);
  add("driver", e.driver);
  add("driver CUDA", e.cuda_driver);
  add("modules", join(e.modules, " "));
  if (!e.container.empty()) add("container", e.container + " " + e.image);
  for (const auto& [k, v] : e.env)
    if (!differs_by_design(k)) out.emplace_back(k, v);
  return out;
}

std::string provenance_summary(const Provenance& e) {
  std::vector<std::string> parts;
  if (!e.python.empty()) parts.push_back("python " + e.python);
  if (!e.torch.empty()) {
    std::vector<std::string> cuda;
    if (!e.torch_cuda.empty()) cuda.push_back("CUDA " + e.torch_cuda);
    if (!e.nccl.empty()) cuda.push_back("NCCL " + e.nccl);
    parts.push_back("torch " + e.torch + (cuda.empty() ? "" : " (" + join(cuda, ", ") + ")"));
  }
  if (!e.gpu.empty()) parts.push_back(e.gpu + (e.driver.empty() ? "" : ", driver " + e.driver));
  if (!e.modules.empty()) parts.push_back("modules " + join(e.modules, " "));
  return join(parts, ", ");
}

std::string provenance_line(const Provenance& e) {
  std::string program = e.program_path.empty() ? printable(e.program, 80) : e.program_path;
  if (!e.script.empty() && e.script != e.program_path) program += " " + e.script;
  std::string line = fmt::format("{} on {} (attempt {})", program, join(e.nodes, " "), e.attempt + 1);
  if (!e.container.empty()) line += fmt::format(" in {} {}", e.container, e.image);
  if (std::string s = provenance_summary(e); !s.empty()) line += "; " + s;
  std::vector<std::string> set;
  for (const auto& [k, v] : e.env)
    if (!differs_by_design(k)) set.push_back(k + "=" + plain_line(v, 40));
  if (!set.empty()) line += "; set " + join(set, " ");
  for (const auto& n : e.notes) line += "; " + plain_line(n, 160);
  return line;
}

std::vector<std::string> provenance_differences(const Provenance& a, const Provenance& b) {
  auto fa = comparable_fields(a), fb = comparable_fields(b);
  auto find = [](const std::vector<std::pair<std::string, std::string>>& f, const std::string& k) -> std::string {
    for (const auto& [name, v] : f)
      if (name == k) return v;
    return "";
  };
  std::vector<std::string> keys;
  for (const auto* f : {&fa, &fb})
    for (const auto& [k, v] : *f)
      if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
  std::vector<std::string> out;
  for (const auto& k : keys) {
    std::string va = find(fa, k), vb = find(fb, k);
    if (va != vb) out.push_back(fmt::format("{}: {} -> {}", k, va.empty() ? "(none)" : va, vb.empty() ? "(none)" : vb));
  }
  return out;
}

}  // namespace ddpctl
