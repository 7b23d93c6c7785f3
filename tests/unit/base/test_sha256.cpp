// SHA-256: the standard's test vectors, and a file as sha256sum sees it.
#include "catch.hpp"

#include <fstream>

#include "helpers.hpp"
#include "base/sha256.hpp"

using namespace ddpctl;

TEST_CASE("sha256: the FIPS 180-4 examples") {
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(sha256_hex(std::string(1000000, 'a')) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // Lengths around a block's padding boundary (55, 56, 64 bytes).
  CHECK(sha256_hex(std::string(55, 'x')) != sha256_hex(std::string(56, 'x')));
}

TEST_CASE("sha256: a file's checksum is sha256sum's") {
  test::TempDir dir;
  std::string path = dir.path + "/blob";
  {
    std::ofstream out(path, std::ios::binary);
    for (int i = 0; i < 200000; ++i) out.put(static_cast<char>(i * 7));
  }
  std::string theirs = test::run_bash("sha256sum \"$1\" | cut -d' ' -f1", {path});
  CHECK(sha256_file_hex(path) + "\n" == theirs);
  CHECK(test::user_error_of([&] { sha256_file_hex(dir.path + "/missing"); }).find("cannot read") != std::string::npos);
}
