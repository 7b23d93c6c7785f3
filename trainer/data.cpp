#include "data.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <stdexcept>
#include <turbojpeg.h>

namespace ddptrain {

namespace fs = std::filesystem;

namespace {

bool is_image(const fs::path& p) {
  std::string ext = p.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), ::tolower);
  return ext == ".jpeg" || ext == ".jpg";
}

std::vector<std::string> subdirs(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory()) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

void add_images(const fs::path& dir, int64_t label, std::vector<Sample>& out) {
  std::vector<std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file() && is_image(e.path())) files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  for (auto& f : files) out.push_back({f, label});
}

// train/<class>/... per class; for TinyImageNet images live in train/<wnid>/images.
std::vector<std::string> read_classes(const fs::path& train_dir, std::vector<Sample>& train) {
  std::vector<std::string> classes = subdirs(train_dir);
  if (classes.empty()) throw std::runtime_error("--data: " + train_dir.string() + " has no class folders");
  for (size_t c = 0; c < classes.size(); ++c) add_images(train_dir / classes[c], static_cast<int64_t>(c), train);
  if (train.empty()) throw std::runtime_error("--data: no .JPEG/.jpg images under " + train_dir.string());
  return classes;
}

// Uniform in [0, n): rejection of the last, partial block of 2^64 values keeps
// it unbiased (std::uniform_int_distribution is not the same everywhere).
uint64_t uniform_below(std::mt19937_64& rng, uint64_t n) {
  const uint64_t limit = std::numeric_limits<uint64_t>::max() - std::numeric_limits<uint64_t>::max() % n;
  uint64_t x;
  do x = rng();
  while (x >= limit);
  return x % n;
}

const float kMean[3] = {0.485f, 0.456f, 0.406f};
const float kStd[3] = {0.229f, 0.224f, 0.225f};

}  // namespace

DataSource open_data(const Options& o) {
  DataSource s;
  s.image_size = o.image_size;
  if (o.data == "synthetic") {
    s.synthetic = true;
    s.layout = "synthetic";
    s.classes = o.classes;
    s.synthetic_size = o.synthetic_size;
    return s;
  }
  fs::path root(o.data);
  fs::path train_dir = fs::is_directory(root / "train") ? root / "train" : root;
  std::vector<std::string> classes = read_classes(train_dir, s.train);
  s.classes = static_cast<int>(classes.size());
  fs::path ann = root / "val" / "val_annotations.txt";
  if (fs::exists(ann)) {
    s.layout = "tinyimagenet";
    std::map<std::string, int64_t> index;
    for (size_t c = 0; c < classes.size(); ++c) index[classes[c]] = static_cast<int64_t>(c);
    std::ifstream in(ann);
    std::string line;
    int line_no = 0;
    while (std::getline(in, line)) {
      ++line_no;
      std::istringstream f(line);
      std::string file, wnid;
      if (!(f >> file >> wnid)) continue;
      auto it = index.find(wnid);
      if (it == index.end())
        throw std::runtime_error(ann.string() + ":" + std::to_string(line_no) + ": class " + wnid +
                                 " is not a folder of train/");
      s.val.push_back({(root / "val" / "images" / file).string(), it->second});
    }
  } else if (fs::is_directory(root / "val")) {
    s.layout = "imagefolder";
    std::vector<std::string> val_classes = subdirs(root / "val");
    for (const auto& vc : val_classes) {
      auto it = std::find(classes.begin(), classes.end(), vc);
      if (it == classes.end())
        throw std::runtime_error("--data: val/" + vc + " is not a class folder of train/");
      add_images(root / "val" / vc, it - classes.begin(), s.val);
    }
  } else {
    s.layout = "imagefolder";
  }
  return s;
}

torch::Tensor load_jpeg(const std::string& path, int image_size) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read image " + path);
  std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  tjhandle tj = tjInitDecompress();
  int w = 0, h = 0, sub = 0, colorspace = 0;
  if (tjDecompressHeader3(tj, bytes.data(), bytes.size(), &w, &h, &sub, &colorspace) != 0) {
    std::string why = tjGetErrorStr2(tj);
    tjDestroy(tj);
    throw std::runtime_error("cannot decode " + path + " as JPEG: " + why);
  }
  auto rgb = torch::empty({h, w, 3}, torch::kUInt8);
  int rc = tjDecompress2(tj, bytes.data(), bytes.size(), rgb.data_ptr<uint8_t>(), w, 0, h, TJPF_RGB, TJFLAG_FASTDCT);
  std::string why = rc != 0 ? tjGetErrorStr2(tj) : "";
  tjDestroy(tj);
  if (rc != 0) throw std::runtime_error("cannot decode " + path + ": " + why);
  auto img = rgb.permute({2, 0, 1}).to(torch::kFloat).div_(255.0);
  if (h != image_size || w != image_size)
    img = torch::nn::functional::interpolate(
              img.unsqueeze(0), torch::nn::functional::InterpolateFuncOptions()
                                    .size(std::vector<int64_t>{image_size, image_size})
                                    .mode(torch::kBilinear)
                                    .align_corners(false))
              .squeeze(0);
  return img;
}

std::vector<size_t> epoch_permutation(size_t size, long seed, int epoch) {
  std::vector<size_t> perm(size);
  for (size_t i = 0; i < size; ++i) perm[i] = i;
  // Seeds fit in 32 bits (bounds::kSeed) and so do epochs: one distinct
  // generator per (seed, epoch).
  std::mt19937_64 rng((static_cast<uint64_t>(seed) << 32) ^ static_cast<uint64_t>(epoch));
  for (size_t i = size; i > 1; --i) std::swap(perm[i - 1], perm[uniform_below(rng, i)]);
  return perm;
}

std::vector<size_t> train_shard(size_t size, int world, int rank, long seed, int epoch, size_t offset,
                                int batch_size) {
  std::vector<size_t> perm = epoch_permutation(size, seed, epoch);
  size_t w = static_cast<size_t>(world), micro_batch = w * static_cast<size_t>(batch_size);
  size_t rest = offset < size ? size - offset : 0;
  rest -= rest % micro_batch;
  std::vector<size_t> out;
  out.reserve(rest / w);
  for (size_t i = static_cast<size_t>(rank); i < rest; i += w) out.push_back(perm[offset + i]);
  return out;
}

std::vector<size_t> val_shard(size_t size, int world, int rank) {
  std::vector<size_t> out;
  for (size_t i = static_cast<size_t>(rank); i < size; i += static_cast<size_t>(world)) out.push_back(i);
  return out;
}

Loader::Loader(const DataSource& src, bool train, std::vector<size_t> indices, int batch_size, int workers, long seed,
               int epoch, bool drop_last, bool pin_memory)
    : src_(src), train_(train), pin_(pin_memory), seed_(seed), epoch_(epoch), window_(static_cast<size_t>(std::max(2, 2 * workers))) {
  for (size_t i = 0; i < indices.size(); i += static_cast<size_t>(batch_size)) {
    size_t end = std::min(indices.size(), i + static_cast<size_t>(batch_size));
    if (drop_last && end - i < static_cast<size_t>(batch_size)) break;
    batches_.emplace_back(indices.begin() + static_cast<long>(i), indices.begin() + static_cast<long>(end));
  }
  for (int t = 0; t < workers; ++t) threads_.emplace_back([this] { work(); });
}

Loader::~Loader() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
}

Batch Loader::build(size_t b) const {
  const auto& idx = batches_[b];
  int s = src_.image_size;
  auto images = torch::empty({static_cast<long>(idx.size()), 3, s, s});
  auto labels = torch::empty({static_cast<long>(idx.size())}, torch::kLong);
  auto mean = torch::tensor({kMean[0], kMean[1], kMean[2]}).view({3, 1, 1});
  auto stdv = torch::tensor({kStd[0], kStd[1], kStd[2]}).view({3, 1, 1});
  for (size_t k = 0; k < idx.size(); ++k) {
    size_t i = idx[k];
    // Per sample and epoch, so that a rerun (or a resume) sees the same data.
    std::mt19937_64 rng(static_cast<uint64_t>(seed_) * 1000003ULL + static_cast<uint64_t>(epoch_) * 7919ULL + i);
    torch::Tensor img;
    int64_t label;
    if (src_.synthetic) {
      auto gen = at::detail::createCPUGenerator(rng());
      img = at::rand({3, s, s}, gen);
      label = static_cast<int64_t>(i % static_cast<size_t>(src_.classes));
    } else {
      const Sample& smp = train_ ? src_.train[i] : src_.val[i];
      img = load_jpeg(smp.path, s);
      label = smp.label;
    }
    if (train_) {
      // Random crop from the image padded by 4, and a horizontal flip.
      int dx = static_cast<int>(rng() % 9), dy = static_cast<int>(rng() % 9);
      img = torch::constant_pad_nd(img, {4, 4, 4, 4}, 0).narrow(1, dy, s).narrow(2, dx, s);
      if (rng() & 1) img = img.flip({2});
    }
    images[static_cast<long>(k)].copy_((img - mean) / stdv);
    labels[static_cast<long>(k)] = label;
  }
  // Page-locked, so the copy to the GPU is asynchronous.
  if (pin_) return {images.pin_memory(), labels.pin_memory(), idx};
  return {images, labels, idx};
}

void Loader::work() {
  for (;;) {
    size_t b;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stop_ || (next_build_ < batches_.size() && next_build_ < next_take_ + window_); });
      if (stop_) return;
      b = next_build_++;
    }
    Batch batch;
    std::string error;
    try {
      batch = build(b);
    } catch (const std::exception& e) {
      error = e.what();
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (!error.empty() && error_.empty()) error_ = error;
    ready_[b] = std::move(batch);
    cv_.notify_all();
  }
}

std::optional<Batch> Loader::next() {
  if (next_take_ >= batches_.size()) return std::nullopt;
  if (threads_.empty()) return build(next_take_++);
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return ready_.count(next_take_) || !error_.empty(); });
  if (!error_.empty()) throw std::runtime_error(error_);
  Batch b = std::move(ready_[next_take_]);
  ready_.erase(next_take_++);
  cv_.notify_all();
  return b;
}

}  // namespace ddptrain
