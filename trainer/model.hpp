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

// The floating-point operations of one image's forward pass through the
// model on image_size x image_size inputs: 2 per multiply-add of the
// convolutions and the classifier (batch norm, ReLU, pooling and the
// residual adds left out, as MFU counts by convention). A training step
// costs 3x this per image (the backward pass twice the forward): the
// metrics' flops_per_sample, report's MFU (docs/report.md).
double forward_flops(const std::string& name, int classes, int image_size);

}  // namespace ddptrain
