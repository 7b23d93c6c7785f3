#pragma once
// Mixed precision: an autocast region and the fp16 loss scaler, as
// torch.autocast and torch.cuda.amp.GradScaler do it.
#include <vector>

#include "compat.hpp"
#include "pch.hpp"

namespace ddptrain {

// Autocast to `dtype` for the lifetime of the guard (the forward pass and the
// loss); does nothing when disabled.
class AutocastGuard {
 public:
  AutocastGuard(bool enabled, bool cuda, at::ScalarType dtype) : enabled_(enabled), cuda_(cuda) {
    if (enabled_) compat::set_autocast(cuda_, true, dtype);
  }
  ~AutocastGuard() {
    if (enabled_) compat::set_autocast(cuda_, false, at::kFloat);
  }
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  bool enabled_, cuda_;
};

// Dynamic loss scaling for fp16: multiply the loss by `scale` before backward,
// unscale the gradients and skip the step when any is inf/NaN, halve the
// scale on overflow and double it after `interval` clean steps. On CUDA the
// work is ATen's fused kernels (_amp_foreach_non_finite_check_and_unscale_,
// _amp_update_scale_), on the device and without a host sync per tensor; on
// CPU (LibTorch 1.13 has no CPU kernels for them) the same rules in plain ops.
// Gradients are already averaged across ranks when unscale() runs, so every
// rank reaches the same verdict.
class GradScaler {
 public:
  GradScaler(bool enabled, torch::Device device, double init_scale = 65536.0, double growth = 2.0,
             double backoff = 0.5, int64_t interval = 2000)
      : enabled_(enabled), cuda_(device.is_cuda()), growth_(growth), backoff_(backoff), interval_(interval) {
    auto f = torch::TensorOptions().dtype(torch::kFloat).device(device);
    scale_ = torch::full({1}, init_scale, f);
    tracker_ = torch::zeros({1}, f.dtype(torch::kInt));
    found_inf_ = torch::zeros({1}, f);
  }
  bool enabled() const { return enabled_; }

  at::Tensor scale(const at::Tensor& loss) const { return enabled_ ? loss * scale_.to(loss.scalar_type()) : loss; }

  // Divides every gradient by the scale; false when any was not finite (the
  // optimizer step must then be skipped).
  bool unscale(const std::vector<at::Tensor>& params) {
    if (!enabled_) return true;
    torch::NoGradGuard no_grad;
    found_inf_.zero_();
    std::vector<at::Tensor> grads;
    for (const auto& p : params)
      if (p.grad().defined()) grads.push_back(p.grad());
    auto inv = scale_.to(torch::kDouble).reciprocal().to(torch::kFloat);
    if (cuda_) {
      at::_amp_foreach_non_finite_check_and_unscale_(grads, found_inf_, inv);
    } else {
      for (auto& g : grads) {
        if (!torch::isfinite(g).all().item<bool>()) found_inf_.fill_(1.0);
        g.mul_(inv);
      }
    }
    return found_inf_.item<float>() == 0.0f;
  }

  // After the step (taken or skipped): back off on overflow, grow after
  // `interval` clean steps in a row.
  void update() {
    if (!enabled_) return;
    if (cuda_) {
      at::_amp_update_scale_(scale_, tracker_, found_inf_, growth_, backoff_, interval_);
      return;
    }
    if (found_inf_.item<float>() != 0.0f) {
      scale_.mul_(backoff_);
      tracker_.zero_();
    } else if (tracker_.item<int>() + 1 >= interval_) {
      scale_.mul_(growth_);
      tracker_.zero_();
    } else {
      tracker_.add_(1);
    }
  }

  double value() const { return scale_.item<double>(); }
  // The state a checkpoint keeps.
  at::Tensor& scale_tensor() { return scale_; }
  at::Tensor& tracker_tensor() { return tracker_; }

 private:
  bool enabled_, cuda_;
  double growth_, backoff_;
  int64_t interval_;
  at::Tensor scale_, tracker_, found_inf_;
};

}  // namespace ddptrain
