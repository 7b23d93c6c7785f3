#pragma once
// An attempt's provenance record: what a job attempt ran with (docs/runs.md)
// as the job agent recorded it (agent/provenance.hpp): the nodes, the
// program's resolved path, the Python and torch (CUDA, NCCL) versions when
// the program is Python, the GPU driver where nvidia-smi is, the loaded
// modules, and the variables ddpctl set. Kept in
// <log base>.restart<A>.environment.json (the subcommand and the file keep
// their first names: queued jobs call the one, earlier runs hold the other);
// read by status, report and diff, with its words.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ddpctl {

struct Provenance {
  std::string job_id;
  int attempt = 0;
  double t = 0;                      // when it was recorded (Unix seconds)
  std::vector<std::string> nodes;    // the job's nodes, in order
  std::string program;               // the launch command's first word, as written
  std::string program_path;          // resolved on PATH or against the working directory; "" if not found
  std::string script;                // a Python program's script (resolved) or "-m module"
  std::string python, torch, torch_cuda, nccl;  // "" where not known
  std::string gpu, driver, cuda_driver;         // nvidia-smi's: GPU model, driver, the driver's CUDA version
  std::vector<std::string> modules;             // LOADEDMODULES (Lmod and Environment Modules)
  std::vector<std::pair<std::string, std::string>> env;  // what ddpctl set, as the job saw it
  std::vector<std::string> notes;                // what could not be read, and why
  std::string container, image;                  // the runtime and image the program ran in ("": none)
};

nlohmann::json provenance_json(const Provenance& e);
std::optional<Provenance> parse_provenance(const std::string& text);
std::string provenance_path(const std::string& log_base, int attempt);
// The record of `attempt` itself: none when that attempt has not written one
// (it has not started yet, or could not run the agent), never an earlier
// attempt's in its place.
std::optional<Provenance> read_provenance(const std::string& log_base, int attempt);
// The newest attempt's record there is; its `attempt` says which (from the
// file's name), and whoever shows it says so.
std::optional<Provenance> read_latest_provenance(const std::string& log_base);

// What makes two runs' provenance comparable, as (name, value): versions,
// GPU, modules and the spec's variables; not the nodes, the time, or what
// differs per job by design (rendezvous address and port, world size, the
// snapshot's PYTHONPATH).
std::vector<std::pair<std::string, std::string>> comparable_fields(const Provenance& e);
// "python 3.11.2, torch 2.14.1 (CUDA 13.0, NCCL 2.27.5), modules cuda/13.0"
// for status; "" when nothing is known.
std::string provenance_summary(const Provenance& e);
// status RUN's line: "/srv/x/train.py on g1 g2 (attempt 1); python 3.11.2,
// torch 2.14.1; set NCCL_DEBUG=WARN"; notes say what could not be read.
std::string provenance_line(const Provenance& e);
// The fields in which `a` and `b` differ: "torch: 1.13.1 -> 2.14.1".
std::vector<std::string> provenance_differences(const Provenance& a, const Provenance& b);

}  // namespace ddpctl
