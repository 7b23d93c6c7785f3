#pragma once
// The communication floor of one DDP training step (docs/report.md, `plan`).
// A ring all-reduce moves 2(n-1)/n of the gradients' bytes through every
// rank's link, so at the fabric's bus bandwidth (busbw, as nccl-tests and
// `ddpctl calibrate` report it) a step spends at least
//   2(n-1)/n x gradient bytes / busbw
// in communication, whatever overlaps it. Multi-node shapes only: the
// profile's figure is the partition's across nodes.
#include <optional>
#include <string>
#include <vector>

#include "explain/report.hpp"

namespace ddpctl {

// Seconds; 0 for one rank.
double comm_floor_s(double gradient_bytes, int ranks, double busbw_gbs);

// The bundled trainer's models (trainer/model.cpp), their parameters for
// `classes` classes: smallcnn 23,696 + 65 per class; resnet18 (3x3 stem)
// 11,168,832 + 513 per class; resnet50 23,500,352 + 2,049 per class.
// nullopt for another name.
std::optional<long long> bundled_model_params(const std::string& model, long long classes);

// `report`: each multi-node row's communication (its step's time beyond the
// one-node row's of the same code and batch per rank) against its floor
// (its parameters at the busbw its fabric check judged by); a row beyond
// twice the floor gets its comm_note.
void compare_comm_floors(std::vector<ReportRow>& rows);

}  // namespace ddpctl
