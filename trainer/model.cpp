#include "model.hpp"

#include <stdexcept>

namespace ddptrain {

namespace {

namespace nn = torch::nn;

nn::Conv2d conv(int in, int out, int k, int stride = 1) {
  return nn::Conv2d(nn::Conv2dOptions(in, out, k).stride(stride).padding(k / 2).bias(false));
}

struct Block : nn::Module {
  virtual torch::Tensor forward(torch::Tensor x) = 0;
};

struct BasicBlock : Block {
  static constexpr int kExpansion = 1;
  nn::Conv2d c1{nullptr}, c2{nullptr};
  nn::BatchNorm2d b1{nullptr}, b2{nullptr};
  nn::Sequential down{nullptr};
  BasicBlock(int in, int planes, int stride) {
    c1 = register_module("conv1", conv(in, planes, 3, stride));
    b1 = register_module("bn1", nn::BatchNorm2d(planes));
    c2 = register_module("conv2", conv(planes, planes, 3));
    b2 = register_module("bn2", nn::BatchNorm2d(planes));
    if (stride != 1 || in != planes)
      down = register_module("downsample", nn::Sequential(conv(in, planes, 1, stride), nn::BatchNorm2d(planes)));
  }
  torch::Tensor forward(torch::Tensor x) override {
    auto y = torch::relu(b1(c1(x)));
    y = b2(c2(y));
    return torch::relu(y + (down ? down->forward(x) : x));
  }
};

struct Bottleneck : Block {
  static constexpr int kExpansion = 4;
  nn::Conv2d c1{nullptr}, c2{nullptr}, c3{nullptr};
  nn::BatchNorm2d b1{nullptr}, b2{nullptr}, b3{nullptr};
  nn::Sequential down{nullptr};
  Bottleneck(int in, int planes, int stride) {
    c1 = register_module("conv1", conv(in, planes, 1));
    b1 = register_module("bn1", nn::BatchNorm2d(planes));
    c2 = register_module("conv2", conv(planes, planes, 3, stride));  // stride here: ResNet v1.5, as torchvision
    b2 = register_module("bn2", nn::BatchNorm2d(planes));
    c3 = register_module("conv3", conv(planes, planes * kExpansion, 1));
    b3 = register_module("bn3", nn::BatchNorm2d(planes * kExpansion));
    if (stride != 1 || in != planes * kExpansion)
      down = register_module("downsample", nn::Sequential(conv(in, planes * kExpansion, 1, stride),
                                                           nn::BatchNorm2d(planes * kExpansion)));
  }
  torch::Tensor forward(torch::Tensor x) override {
    auto y = torch::relu(b1(c1(x)));
    y = torch::relu(b2(c2(y)));
    y = b3(c3(y));
    return torch::relu(y + (down ? down->forward(x) : x));
  }
};

template <class B>
struct ResNet : Net {
  nn::Conv2d stem{nullptr};
  nn::BatchNorm2d stem_bn{nullptr};
  std::vector<std::shared_ptr<Block>> blocks;
  nn::Linear fc{nullptr};
  ResNet(std::vector<int> layers, int classes) {
    stem = register_module("conv1", conv(3, 64, 3));
    stem_bn = register_module("bn1", nn::BatchNorm2d(64));
    int in = 64;
    int planes = 64;
    for (size_t l = 0; l < layers.size(); ++l, planes *= 2) {
      for (int i = 0; i < layers[l]; ++i) {
        int stride = (l > 0 && i == 0) ? 2 : 1;
        auto b = std::make_shared<B>(in, planes, stride);
        register_module("layer" + std::to_string(l + 1) + "_" + std::to_string(i), b);
        blocks.push_back(b);
        in = planes * B::kExpansion;
      }
    }
    fc = register_module("fc", nn::Linear(in, classes));
    for (auto& m : modules(false)) {
      if (auto* c = m->as<nn::Conv2d>()) nn::init::kaiming_normal_(c->weight, 0.0, torch::kFanOut, torch::kReLU);
      if (auto* b = m->as<nn::BatchNorm2d>()) {
        nn::init::ones_(b->weight);
        nn::init::zeros_(b->bias);
      }
    }
  }
  torch::Tensor forward(torch::Tensor x) override {
    x = torch::relu(stem_bn(stem(x)));
    for (auto& b : blocks) x = b->forward(x);
    x = torch::adaptive_avg_pool2d(x, {1, 1}).flatten(1);
    return fc(x);
  }
};

struct SmallCnn : Net {
  nn::Sequential features{nullptr};
  nn::Linear fc{nullptr};
  explicit SmallCnn(int classes) {
    features = register_module(
        "features", nn::Sequential(conv(3, 16, 3), nn::BatchNorm2d(16), nn::ReLU(), nn::MaxPool2d(2),
                                   conv(16, 32, 3), nn::BatchNorm2d(32), nn::ReLU(), nn::MaxPool2d(2),
                                   conv(32, 64, 3), nn::BatchNorm2d(64), nn::ReLU()));
    fc = register_module("fc", nn::Linear(64, classes));
  }
  torch::Tensor forward(torch::Tensor x) override {
    x = features->forward(x);
    return fc(torch::adaptive_avg_pool2d(x, {1, 1}).flatten(1));
  }
};

}  // namespace

std::shared_ptr<Net> make_model(const std::string& name, int classes) {
  if (name == "resnet18") return std::make_shared<ResNet<BasicBlock>>(std::vector<int>{2, 2, 2, 2}, classes);
  if (name == "resnet50") return std::make_shared<ResNet<Bottleneck>>(std::vector<int>{3, 4, 6, 3}, classes);
  if (name == "smallcnn") return std::make_shared<SmallCnn>(classes);
  throw std::runtime_error("--model: unknown model " + name + " (resnet18, resnet50, smallcnn)");
}

namespace {

// A convolution as conv() builds it (padding k/2): its output side for
// input side h, and 2 x its multiply-adds at that output.
int conv_out(int h, int stride) { return (h - 1) / stride + 1; }
double conv_flops(int in, int out, int k, int h_out) {
  return 2.0 * in * out * k * k * static_cast<double>(h_out) * h_out;
}

// ResNet as ResNet<B> above builds it: the 3x3 stride-1 stem, the blocks'
// strides, the downsampling convolutions, the classifier.
double resnet_flops(bool bottleneck, const std::vector<int>& layers, int classes, int h) {
  double f = conv_flops(3, 64, 3, h);
  int in = 64, planes = 64, expansion = bottleneck ? 4 : 1;
  for (size_t l = 0; l < layers.size(); ++l, planes *= 2) {
    for (int i = 0; i < layers[l]; ++i) {
      int stride = (l > 0 && i == 0) ? 2 : 1, ho = conv_out(h, stride), out = planes * expansion;
      if (bottleneck)
        f += conv_flops(in, planes, 1, h) + conv_flops(planes, planes, 3, ho) + conv_flops(planes, out, 1, ho);
      else
        f += conv_flops(in, planes, 3, ho) + conv_flops(planes, planes, 3, ho);
      if (stride != 1 || in != out) f += conv_flops(in, out, 1, ho);
      in = out;
      h = ho;
    }
  }
  return f + 2.0 * in * classes;
}

}  // namespace

double forward_flops(const std::string& name, int classes, int image_size) {
  if (name == "resnet18") return resnet_flops(false, {2, 2, 2, 2}, classes, image_size);
  if (name == "resnet50") return resnet_flops(true, {3, 4, 6, 3}, classes, image_size);
  if (name == "smallcnn") {  // three 3x3 convolutions, a 2x2 max-pool after the first two
    int h = image_size;
    double f = conv_flops(3, 16, 3, h);
    f += conv_flops(16, 32, 3, h / 2);
    f += conv_flops(32, 64, 3, h / 4);
    return f + 2.0 * 64 * classes;
  }
  throw std::runtime_error("--model: unknown model " + name + " (resnet18, resnet50, smallcnn)");
}

}  // namespace ddptrain
