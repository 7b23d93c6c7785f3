#pragma once
// The models, written with torch::nn: ResNet-18 and ResNet-50 in torchvision's
// layout with a stem for 64x64 inputs (3x3 stride-1 convolution, no max-pool),
// and a small CNN for fast tests.
#include <string>

#include "pch.hpp"

namespace ddptrain {

// Any of the models: images [N,3,H,W] in, logits [N,classes] out.
struct Net : torch::nn::Module {
  virtual torch::Tensor forward(torch::Tensor x) = 0;
};

std::shared_ptr<Net> make_model(const std::string& name, int classes);

}  // namespace ddptrain
