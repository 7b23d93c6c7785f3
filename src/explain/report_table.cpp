#include "explain/report_table.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/text.hpp"

namespace ddpctl {

using nlohmann::json;

namespace {

std::string num(const std::optional<double>& v, int decimals) {
  return v ? fmt::format("{:.{}f}", *v, decimals) : "-";
}
std::string percent(const std::optional<double>& v) { return v ? fmt::format("{:.0f}%", *v * 100) : "-"; }
std::string usage_percent(const std::optional<double>& v) { return v ? fmt::format("{:.0f}%", *v) : "-"; }
std::string gpu_memory(const ReportRow& r) {
  if (!r.gpu_mem_peak_mib) return "-";
  auto gib = [](const std::optional<double>& m) { return m ? fmt::format("{:.1f}", *m / 1024) : std::string("-"); };
  return gib(r.gpu_mem_peak_mib) + "/" + gib(r.gpu_mem_mean_mib) + "/" + gib(r.gpu_mem_mode_mib);
}
std::string duration(const std::optional<double>& s) { return s ? format_duration(*s, DurationStyle::Tenths) : "-"; }
std::string memory(const ReportRow& r) {
  if (!r.mem0_peak) return "-";
  return fmt::format("{:.0f} / {:.0f} / {:.0f}", *r.mem0_peak, r.mem0_avg.value_or(NAN), r.mem0_mode.value_or(NAN));
}
json opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

std::string state_text(const ReportRow& r) { return r.state ? state_name(*r.state) : ""; }
std::string plural(int n, const char* one) { return fmt::format("{} {}{}", n, one, n == 1 ? "" : "s"); }

// "1 node × 2 GPUs", or "2 nodes × 1 rank" for a CPU run.
std::string setup(const ReportRow& r) {
  return fmt::format("{} × {}", plural(r.nodes, "node"),
                     r.gpus_per_node > 0 ? plural(r.gpus_per_node, "GPU") : plural(r.ranks_per_node, "rank"));
}

std::string csv_cell(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string mem_note(const std::vector<ReportRow>& rows) {
  for (const auto& r : rows)
    if (!r.mem_kind.empty())
      return r.mem_kind == "rss" ? "memory: peak resident set size per rank (CPU), MiB"
                                 : "memory: CUDA allocator peak per rank, MiB";
  return "";
}

std::string mfu_cell(const std::optional<double>& v) { return v ? fmt::format("{:.1f}%", *v * 100) : "-"; }

// Each row's MFU in words: its basis where known; where not, why, once for
// the rows it holds for.
std::vector<std::string> mfu_notes(const std::vector<ReportRow>& rows) {
  std::vector<std::string> out;
  std::vector<std::pair<std::string, std::vector<std::string>>> unknown;  // why -> its rows' labels
  for (const auto& r : rows) {
    if (r.mfu_words.empty()) continue;
    if (r.mfu) {
      out.push_back(fmt::format("{} ({}): MFU {}", r.label, r.run_id, r.mfu_words));
      continue;
    }
    auto it = std::find_if(unknown.begin(), unknown.end(), [&r](const auto& u) { return u.first == r.mfu_words; });
    if (it == unknown.end()) it = unknown.insert(unknown.end(), {r.mfu_words, {}});
    it->second.push_back(r.label);
  }
  for (const auto& [why, labels] : unknown) out.push_back(fmt::format("MFU of {}: {}", join(labels, ", "), why));
  return out;
}

// Columns that no row has (every row's cell is "-") are left out, but the
// first `kept` (what the rows are); their headers are returned, to be said
// once under the table.
std::vector<std::string> drop_empty_columns(std::vector<std::vector<std::string>>& cells, size_t kept) {
  std::vector<std::string> dropped;
  if (cells.size() < 2) return dropped;
  for (size_t c = cells.front().size(); c-- > kept;) {
    bool empty = std::all_of(cells.begin() + 1, cells.end(), [c](const auto& row) { return row[c] == "-"; });
    if (!empty) continue;
    dropped.insert(dropped.begin(), cells.front()[c]);
    for (auto& row : cells) row.erase(row.begin() + static_cast<long>(c));
  }
  return dropped;
}

}  // namespace

std::string report_table(const std::vector<ReportRow>& rows) {
  std::vector<std::vector<std::string>> cells = {
      {"SHAPE", "RUN", "CODE", "JOB", "STATE", "RANKS", "GPUS", "EPOCH", "TRAIN LOSS/ACC", "VAL LOSS/ACC", "IMG/S", "SPEEDUP",
       "EFF", "MFU", "WALL", "GPU-H", "NODE-H", "MEM0 PEAK/AVG/MODE", "MEM MAX", "RDZV", "1ST STEP", "GPU UTIL",
       "GPU MEM PEAK/AVG/MODE", "CPU", "PEAK RSS"}};
  for (const auto& r : rows) {
    auto loss_acc = [](const std::optional<double>& l, const std::optional<double>& a) {
      return l || a ? fmt::format("{}/{}", num(l, 3), a ? fmt::format("{:.2f}%", *a) : "-") : "-";
    };
    cells.push_back({r.shrunk.empty() ? r.label : r.label + "*", r.run_id, r.code.empty() ? "-" : r.code, r.job_id.empty() ? "-" : r.job_id, r.state ? state_name(*r.state) : "-",
                     std::to_string(r.world()), std::to_string(r.gpus),
                     r.epochs ? fmt::format("{}/{}", r.epochs_done, r.epochs) : "-", loss_acc(r.train_loss, r.train_acc),
                     loss_acc(r.val_loss, r.val_acc), num(r.img_per_s, 1), r.speedup ? fmt::format("{:.2f}x", *r.speedup) : "-",
                     percent(r.efficiency), mfu_cell(r.mfu), duration(r.wall_s), num(r.gpu_hours, 3), num(r.node_hours, 3), memory(r),
                     num(r.mem_max, 0), r.rendezvous_s ? fmt::format("{:.2f}s", *r.rendezvous_s) : "-",
                     r.first_step_s ? fmt::format("{:.2f}s", *r.first_step_s) : "-", usage_percent(r.gpu_util_mean),
                     gpu_memory(r), usage_percent(r.cpu_pct_mean), r.rss_peak_bytes ? format_bytes(*r.rss_peak_bytes) : "-"});
  }
  // SHAPE, RUN, CODE, JOB, STATE, RANKS, GPUS say what the rows are; the rest only where a run has them.
  std::vector<std::string> dropped = drop_empty_columns(cells, 7);
  std::string out;
  for (const auto& line : format_columns(cells)) out += line + "\n";
  std::vector<std::string> notes;
  if (!dropped.empty()) notes.push_back("not shown, no run has them: " + join(dropped, ", "));
  if (auto c = mixed_code_note(rows); !c.empty()) notes.push_back("warning: " + c);
  if (auto e = mixed_provenance_note(rows); !e.empty()) notes.push_back("warning: " + e);
  if (auto m = mem_note(rows); !m.empty()) notes.push_back(m);
  for (const auto& r : rows)
    if (!r.comm_note.empty()) notes.push_back("warning: " + r.comm_note);
  for (const auto& r : rows)
    if (r.account) {
      notes.push_back(fmt::format("{} ({}) used {}", r.label, r.run_id, describe_account(*r.account)));
      if (auto ranks = describe_ranks(*r.account); !ranks.empty()) notes.push_back(fmt::format("{} {}", r.label, ranks));
    }
  for (const auto& n : mfu_notes(rows)) notes.push_back(n);
  if (std::any_of(rows.begin(), rows.end(), [](const ReportRow& r) { return r.img_per_s.has_value(); }))
    notes.push_back("throughput: mean over epochs after the first; speedup and efficiency vs the fewest ranks");
  if (std::any_of(rows.begin(), rows.end(), [](const ReportRow& r) { return r.rss_peak_bytes.has_value(); }))
    notes.push_back("GPU UTIL, GPU MEM (GiB, per GPU), CPU (100% = a core, the whole job) and PEAK RSS (the largest "
                    "node's): from the job agent's samples");
  for (const auto& r : rows)
    if (r.wall_source == "metrics") notes.push_back(fmt::format("{}: wall time from the metrics file (Slurm had no times)", r.label));
  for (const auto& r : rows)
    if (!r.failure.empty()) notes.push_back(fmt::format("{} ({}): failed: {}", r.label, r.run_id, r.failure));
  for (const auto& r : rows)
    if (!r.slow.empty()) notes.push_back(fmt::format("{} ({}): slow: {}", r.label, r.run_id, r.slow));
  for (const auto& r : rows) {
    if (!r.shrunk.empty())
      notes.push_back(fmt::format("{}* ({}): shrunk in the job to {} (restart.min_nodes): its throughput, speedup "
                                  "and efficiency mix world sizes",
                                  r.label, r.run_id, r.shrunk));
    if (!r.in_job.empty())
      notes.push_back(fmt::format("{} ({}): in-job restarts ({:.1f} s lost in all, from each failed step's last "
                                  "progress, else its end, to training again): {}",
                                  r.label, r.run_id, r.in_job_lost_s, join(r.in_job, "; ")));
    if (!r.requeues.empty())
      notes.push_back(fmt::format("{} ({}): requeued {} time{}{}, {} from a stop to the next start in all: {}",
                                  r.label, r.run_id, r.requeues.size(), r.requeues.size() == 1 ? "" : "s",
                                  r.preemptions ? fmt::format(" ({} after preemption)", r.preemptions) : "",
                                  format_duration(r.requeue_lost_s), join(r.requeues, "; ")));
    if (r.idle_gpu_hours)
      notes.push_back(fmt::format("{} ({}): {:.3f} of its GPU-hours were allocated GPUs no step ran on (spares, "
                                  "nodes left out)",
                                  r.label, r.run_id, *r.idle_gpu_hours));
  }
  for (const auto& r : rows)
    if (!r.problem.empty()) notes.push_back(fmt::format("{} ({}): {}", r.label, r.run_id, r.problem));
  for (const auto& n : notes) out += "  " + n + "\n";
  return out;
}

std::string report_markdown(const std::vector<ReportRow>& rows) {
  std::vector<std::vector<std::string>> cells = {
      {"Setup", "Ranks", "GPUs", "Throughput (img/s)", "Speedup", "Efficiency", "MFU", "Time", "GPU-hours", "Node-hours",
       "Rank 0 memory peak / avg / mode (MiB)", "Max memory over ranks (MiB)", "Val loss", "Val acc", "GPU util",
       "GPU memory peak / avg / mode (GiB)", "CPU util", "Peak RSS"}};
  for (const auto& r : rows)
    cells.push_back({setup(r), std::to_string(r.world()), std::to_string(r.gpus), num(r.img_per_s, 1),
                     r.speedup ? fmt::format("{:.2f}×", *r.speedup) : "-", percent(r.efficiency), mfu_cell(r.mfu),
                     duration(r.wall_s),
                     num(r.gpu_hours, 3), num(r.node_hours, 3), memory(r), num(r.mem_max, 0), num(r.val_loss, 3),
                     r.val_acc ? fmt::format("{:.2f}%", *r.val_acc) : "-", usage_percent(r.gpu_util_mean),
                     gpu_memory(r), usage_percent(r.cpu_pct_mean),
                     r.rss_peak_bytes ? format_bytes(*r.rss_peak_bytes) : "-"});
  std::vector<std::string> dropped = drop_empty_columns(cells, 3);
  std::string out;
  for (size_t i = 0; i < cells.size(); ++i) {
    out += "| " + join(cells[i], " | ") + " |\n";
    if (i == 0) {
      out += "|---|";
      for (size_t c = 1; c < cells[0].size(); ++c) out += "---:|";
      out += "\n";
    }
  }
  if (!dropped.empty()) out += "\nNot shown, no run has them: " + join(dropped, ", ") + ".\n";
  if (auto c = mixed_code_note(rows); !c.empty()) out += "\n**Warning:** " + c + "\n";
  if (auto e = mixed_provenance_note(rows); !e.empty()) out += "\n**Warning:** " + e + "\n";
  for (const auto& r : rows)
    if (!r.comm_note.empty()) out += "\n**Warning:** " + r.comm_note + "\n";
  for (const auto& r : rows)
    if (r.account) {
      out += fmt::format("\n{} ({}) used {}\n", r.label, r.run_id, describe_account(*r.account));
      if (auto ranks = describe_ranks(*r.account); !ranks.empty()) out += fmt::format("\n{} {}\n", r.label, ranks);
    }
  for (const auto& n : mfu_notes(rows)) out += "\n" + n + "\n";
  return out;
}

std::string report_csv(const std::vector<ReportRow>& rows) {
  std::string out =
      "run,shape,code,job,state,nodes,ranks_per_node,gpus_per_node,ranks,gpus,epochs_done,epochs,train_loss,train_acc,"
      "val_loss,val_acc,img_per_s,speedup,efficiency,wall_s,wall_source,gpu_hours,node_hours,mem0_peak_mib,"
      "mem0_avg_mib,mem0_mode_mib,mem_max_mib,mem_kind,rendezvous_s,first_step_s,gpu_util_pct,gpu_mem_peak_mib,"
      "gpu_mem_avg_mib,gpu_mem_mode_mib,cpu_pct,rss_peak_bytes,metrics,problem,failure,flops_per_sample,mfu\n";
  auto v = [](const std::optional<double>& x) { return x ? fmt::format("{}", *x) : std::string(); };
  for (const auto& r : rows) {
    std::vector<std::string> c = {r.run_id, r.label, r.code, r.job_id, state_text(r), std::to_string(r.nodes),
                                  std::to_string(r.ranks_per_node), std::to_string(r.gpus_per_node),
                                  std::to_string(r.world()), std::to_string(r.gpus), std::to_string(r.epochs_done),
                                  std::to_string(r.epochs), v(r.train_loss), v(r.train_acc), v(r.val_loss), v(r.val_acc),
                                  v(r.img_per_s), v(r.speedup), v(r.efficiency), v(r.wall_s), r.wall_source,
                                  v(r.gpu_hours), v(r.node_hours), v(r.mem0_peak), v(r.mem0_avg), v(r.mem0_mode),
                                  v(r.mem_max), r.mem_kind, v(r.rendezvous_s), v(r.first_step_s), v(r.gpu_util_mean),
                                  v(r.gpu_mem_peak_mib), v(r.gpu_mem_mean_mib), v(r.gpu_mem_mode_mib), v(r.cpu_pct_mean),
                                  r.rss_peak_bytes ? std::to_string(*r.rss_peak_bytes) : "", r.metrics_path,
                                  r.problem, r.failure, v(r.flops_per_sample), v(r.mfu)};
    for (size_t i = 0; i < c.size(); ++i) out += (i ? "," : "") + csv_cell(c[i]);
    out += "\n";
  }
  return out;
}

std::string report_json(const std::vector<ReportRow>& rows) {
  json out = json::array();
  for (const auto& r : rows)
    out.push_back({{"run", r.run_id},           {"shape", r.label}, {"code", r.code.empty() ? json() : json(r.code)},
                   {"environment", r.provenance ? provenance_json(*r.provenance) : json()},
                   {"job", r.job_id},           {"state", state_text(r)},
                   {"nodes", r.nodes},          {"ranks_per_node", r.ranks_per_node},
                   {"gpus_per_node", r.gpus_per_node}, {"ranks", r.world()},
                   {"gpus", r.gpus},            {"epochs_done", r.epochs_done},
                   {"epochs", r.epochs},        {"train_loss", opt(r.train_loss)},
                   {"train_acc", opt(r.train_acc)}, {"val_loss", opt(r.val_loss)},
                   {"val_acc", opt(r.val_acc)}, {"img_per_s", opt(r.img_per_s)},
                   {"speedup", opt(r.speedup)}, {"efficiency", opt(r.efficiency)},
                   {"wall_s", opt(r.wall_s)},   {"wall_source", r.wall_source},
                   {"gpu_hours", opt(r.gpu_hours)}, {"node_hours", opt(r.node_hours)},
                   {"mem0_mib", {{"peak", opt(r.mem0_peak)}, {"avg", opt(r.mem0_avg)}, {"mode", opt(r.mem0_mode)}}},
                   {"mem_max_mib", opt(r.mem_max)}, {"mem_kind", r.mem_kind},
                   {"rendezvous_s", opt(r.rendezvous_s)}, {"first_step_s", opt(r.first_step_s)},
                   {"usage", {{"gpu_util_pct", opt(r.gpu_util_mean)},
                              {"gpu_mem_mib", {{"peak", opt(r.gpu_mem_peak_mib)}, {"avg", opt(r.gpu_mem_mean_mib)},
                                               {"mode", opt(r.gpu_mem_mode_mib)}}},
                              {"cpu_pct", opt(r.cpu_pct_mean)}, {"rss_peak_bytes", opt(r.rss_peak_bytes)}}},
                   {"metrics", r.metrics_path}, {"problem", r.problem}, {"failure", r.failure},
                   {"slow", r.slow.empty() ? json() : json(r.slow)},
                   {"in_job", {{"restarts", r.in_job}, {"lost_s", r.in_job_lost_s},
                               {"shrunk", r.shrunk.empty() ? json() : json(r.shrunk)}}},
                   {"requeues", {{"attempts", r.requeues}, {"preemptions", r.preemptions}, {"lost_s", r.requeue_lost_s}}},
                   {"idle_gpu_hours", opt(r.idle_gpu_hours)},
                   {"step_s", opt(r.step_s)}, {"params", opt(r.params)}, {"busbw_gbs", opt(r.busbw_gbs)},
                   {"comm_s", opt(r.comm_s)}, {"comm_floor_s", opt(r.comm_floor_s)},
                   {"comm_note", r.comm_note.empty() ? json() : json(r.comm_note)},
                   {"account", r.account ? account_json(*r.account) : json()},
                   {"flops_per_sample", opt(r.flops_per_sample)}, {"mfu", opt(r.mfu)},
                   {"mfu_words", r.mfu_words.empty() ? json() : json(r.mfu_words)},
                   {"checkpoint", r.checkpoint.empty() ? json()
                                                       : json{{"folder", r.checkpoint}, {"saved", r.checkpoint_saved}}}});
  return out.dump(2) + "\n";
}


}  // namespace ddpctl
