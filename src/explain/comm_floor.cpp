#include "explain/comm_floor.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace ddpctl {

double comm_floor_s(double gradient_bytes, int ranks, double busbw_gbs) {
  if (ranks < 2 || busbw_gbs <= 0) return 0;
  return 2.0 * (ranks - 1) / ranks * gradient_bytes / (busbw_gbs * 1e9);
}

std::optional<long long> bundled_model_params(const std::string& model, long long classes) {
  // Counted from trainer/model.cpp's layers (convolutions without bias,
  // batch norms' weight and bias, the classifier's weight and bias); the
  // trainer prints the same count ("parameters identical on all N ranks").
  if (model == "smallcnn") return 23'696 + 65 * classes;
  if (model == "resnet18") return 11'168'832 + 513 * classes;
  if (model == "resnet50") return 23'500'352 + 2'049 * classes;
  return std::nullopt;
}

namespace {

// The one-node row `r` is compared with: the same code and batch per rank,
// the most ranks.
const ReportRow* one_node_base(const std::vector<ReportRow>& rows, const ReportRow& r) {
  const ReportRow* base = nullptr;
  for (const auto& b : rows)
    if (b.nodes == 1 && b.step_s && b.code == r.code && b.batch_per_rank == r.batch_per_rank &&
        (!base || b.world() > base->world()))
      base = &b;
  return base;
}

}  // namespace

void compare_comm_floors(std::vector<ReportRow>& rows) {
  for (auto& r : rows) {
    if (r.nodes < 2 || !r.step_s || !r.params || !r.busbw_gbs) continue;
    r.comm_floor_s = comm_floor_s(4.0 * *r.params, r.world(), *r.busbw_gbs);
    const ReportRow* base = one_node_base(rows, r);
    if (!base) continue;
    r.comm_s = std::max(0.0, *r.step_s - *base->step_s);
    if (*r.comm_floor_s <= 0 || *r.comm_s <= 2 * *r.comm_floor_s) continue;
    r.comm_note = fmt::format(
        "{} ({}): its step takes {:.3g} s, {:.3g} s more than {}'s on one node: {:.1f}x its communication floor "
        "({:.3g} s: {:.0f} parameters over {} ranks at the {:.3g} GB/s its fabric check judged by); the fabric or "
        "the placement is slower than the profile's figure (the run's fabric check in `ddpctl status`; "
        "`ddpctl calibrate` measures the partition)",
        r.label, r.run_id, *r.step_s, *r.comm_s, base->label, *r.comm_s / *r.comm_floor_s, *r.comm_floor_s,
        *r.params, r.world(), *r.busbw_gbs);
  }
}

}  // namespace ddpctl
