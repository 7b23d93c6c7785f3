// Writes a tiny dataset in TinyImageNet's layout for the trainer's tests:
//   DIR/wnids.txt, DIR/train/<wnid>/images/<wnid>_<i>.JPEG,
//   DIR/val/images/val_<i>.JPEG and DIR/val/val_annotations.txt.
// Each class is a distinct colour with a stripe pattern plus noise, so a
// small CNN can learn it in a few epochs.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <turbojpeg.h>
#include <vector>

namespace fs = std::filesystem;

static void write_jpeg(const std::string& path, int cls, int size, std::mt19937& rng) {
  std::vector<unsigned char> px(static_cast<size_t>(size * size * 3));
  std::normal_distribution<float> noise(0.f, 20.f);
  int r = 40 + (cls * 97) % 180, g = 40 + (cls * 57) % 180, b = 40 + (cls * 131) % 180;
  for (int y = 0; y < size; ++y)
    for (int x = 0; x < size; ++x) {
      bool stripe = ((cls % 2 ? x : y) / (2 + cls % 4)) % 2 == 0;
      int base[3] = {r, g, b};
      for (int c = 0; c < 3; ++c) {
        float v = static_cast<float>(base[c]) + (stripe ? 40.f : -40.f) + noise(rng);
        px[static_cast<size_t>((y * size + x) * 3 + c)] = static_cast<unsigned char>(v < 0 ? 0 : v > 255 ? 255 : v);
      }
    }
  tjhandle tj = tjInitCompress();
  unsigned char* out = nullptr;
  unsigned long len = 0;
  if (tjCompress2(tj, px.data(), size, 0, size, TJPF_RGB, &out, &len, TJSAMP_444, 90, 0) != 0) {
    std::fprintf(stderr, "make_tiny_imagenet: %s\n", tjGetErrorStr2(tj));
    std::exit(1);
  }
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<char*>(out), static_cast<std::streamsize>(len));
  tjFree(out);
  tjDestroy(tj);
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: make_tiny_imagenet DIR [CLASSES] [TRAIN_PER_CLASS] [VAL_PER_CLASS] [SIZE]\n");
    return 2;
  }
  fs::path dir = argv[1];
  int classes = argc > 2 ? std::atoi(argv[2]) : 4;
  int per_class = argc > 3 ? std::atoi(argv[3]) : 32;
  int val_per_class = argc > 4 ? std::atoi(argv[4]) : 8;
  int size = argc > 5 ? std::atoi(argv[5]) : 64;
  std::mt19937 rng(1234);
  fs::create_directories(dir / "val" / "images");
  std::ofstream wnids(dir / "wnids.txt"), ann(dir / "val" / "val_annotations.txt");
  int val_index = 0;
  for (int c = 0; c < classes; ++c) {
    char wnid[16];
    std::snprintf(wnid, sizeof wnid, "n%08d", c);
    wnids << wnid << "\n";
    fs::path img_dir = dir / "train" / wnid / "images";
    fs::create_directories(img_dir);
    for (int i = 0; i < per_class; ++i)
      write_jpeg((img_dir / (std::string(wnid) + "_" + std::to_string(i) + ".JPEG")).string(), c, size, rng);
    for (int i = 0; i < val_per_class; ++i, ++val_index) {
      std::string file = "val_" + std::to_string(val_index) + ".JPEG";
      write_jpeg((dir / "val" / "images" / file).string(), c, size, rng);
      ann << file << "\t" << wnid << "\t0\t0\t" << size << "\t" << size << "\n";
    }
  }
  return 0;
}
