#include "explain/comm_floor.hpp"

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

}  // namespace ddpctl
