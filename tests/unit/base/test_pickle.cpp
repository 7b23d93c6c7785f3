// The pickle reader on torch's own dumps (tests/unit/data/flight_recorder/),
// on hand-made byte strings for each opcode, and on what it must refuse.
#include "catch.hpp"
#include "base/files.hpp"
#include "helpers.hpp"
#include "base/pickle.hpp"

using namespace ddpctl;
using Json = nlohmann::json;

namespace {

std::string fixture(const std::string& name) {
  return read_file(test::source_dir() + "/tests/unit/data/flight_recorder/" + name, 1 << 24);
}

std::string bytes(std::initializer_list<int> b) {
  std::string s;
  for (int c : b) s += static_cast<char>(c);
  return s;
}

}  // namespace

TEST_CASE("a dump torch 2.14 wrote reads as the dict Python reads", "[pickle]") {
  // What pickle.load gives for gloo-2ranks-rank1-sleeps/rank_1 (README.md).
  Json d = read_pickle(fixture("gloo-2ranks-rank1-sleeps/rank_1"));
  CHECK(d["version"] == "2.10");
  CHECK(d["pg_status"]["0"]["last_enqueued_collective"] == 6);
  CHECK(d["pg_status"]["0"]["last_started_collective"] == -1);
  CHECK(d["pg_config"][""]["ranks"] == "[0, 1]");
  REQUIRE(d["entries"].size() == 6);
  const Json& e = d["entries"][5];
  CHECK(e["process_group"] == Json::array({"0", "default_pg"}));
  CHECK(e["collective_seq_id"] == 6);
  CHECK(e["profiling_name"] == "gloo:all_reduce");
  CHECK(e["state"] == "scheduled");
  CHECK(e["retired"] == true);
  CHECK(e["time_discovered_started_ns"].is_null());
  CHECK(e["input_sizes"] == Json::parse("[[4]]"));
  CHECK(e["timeout_ms"] == 1800000);
  CHECK(e["time_created_ns"].get<long long>() > 1700000000000000000LL);  // LONG1, 8 bytes
  // The frames are one shared dict per distinct frame, memoized: each
  // entry still has all of them.
  REQUIRE(e["frames"].size() == 4);
  CHECK(e["frames"][2]["filename"] == "/tmp/ddpctl-fr-record/fr_hang.py");
  CHECK(d["entries"][0]["frames"] == e["frames"]);
}

TEST_CASE("CPython's protocol 2 pickles of the NCCL shape read too (floats, SETITEM, APPEND)", "[pickle]") {
  Json d = read_pickle(fixture("nccl-4ranks-rank2-missing/rank_0"));
  CHECK(d["comm_lib_version"] == "2.27.7");
  CHECK(d["entries"][0]["duration_ms"] == 1.5);
  CHECK(d["nccl_comm_state"]["0"]["nRanks"] == "4");
}

TEST_CASE("each opcode a dump may use", "[pickle]") {
  // {'a': [1, -2, 300, 70000, True, None], 'b': (1.5, 'x'), 3: {}} by hand.
  std::string p = bytes({0x80, 2, '}', 'q', 0, '(', 'X', 1, 0, 0, 0, 'a', ']', 'q', 1, '(', 'K', 1, 'J', 0xfe, 0xff, 0xff,
                         0xff, 'M', 0x2c, 0x01, 0x8a, 3, 0x70, 0x11, 0x01, 0x88, 'N', 'e', 0x8c, 1, 'b', 'G', 0x3f,
                         0xf8, 0, 0, 0, 0, 0, 0, 0x8c, 1, 'x', 0x86, 'K', 3, '}', 'u', '.'});
  Json d = read_pickle(p);
  CHECK(d == Json::parse(R"({"a": [1, -2, 300, 70000, true, null], "b": [1.5, "x"], "3": {}})"));

  SECTION("a negative LONG1, a tuple of three, a false, protocol 4's frame and memoize") {
    std::string q = bytes({0x80, 4, 0x95, 9, 0, 0, 0, 0, 0, 0, 0, 0x8a, 2, 0x00, 0xff, 0x94, 0x89, ')', 0x87, 'h', 0, '.'});
    CHECK_THROWS_WITH(read_pickle(q), Catch::Contains("STOP with an unfinished stack"));
    std::string r = bytes({0x80, 4, 0x95, 9, 0, 0, 0, 0, 0, 0, 0, 0x8a, 2, 0x00, 0xff, 0x94, 0x89, ')', 0x87, '.'});
    CHECK(read_pickle(r) == Json::parse("[-256, false, []]"));
  }
  SECTION("a memoized list read back after it was filled") {
    // l = [1]; [l, l]: the second is a BINGET of the list the first filled.
    std::string m = bytes({0x80, 2, ']', 'q', 0, '(', ']', 'q', 1, 'K', 1, 'a', 'h', 1, 'e', '.'});
    CHECK(read_pickle(m) == Json::parse("[[1], [1]]"));
  }
  SECTION("a memoized string used again after being put into a dict") {
    std::string m = bytes({0x80, 2, ']', '(', '}', 'X', 1, 0, 0, 0, 'k', 'q', 0, 'K', 1, 's', 'h', 0, 'e', '.'});
    CHECK(read_pickle(m) == Json::parse(R"([{"k": 1}, "k"])"));
  }
}

TEST_CASE("what a dump never has is refused, naming the opcode and where", "[pickle]") {
  // pickle.dumps(os.system) would be GLOBAL 'posix system'.
  std::string global = bytes({0x80, 2, 'c', 'p', 'o', 's', 'i', 'x', '\n', 's', 'y', 's', 't', 'e', 'm', '\n', '.'});
  CHECK_THROWS_WITH(read_pickle(global), "byte 2: opcode GLOBAL is not one a Flight Recorder dump has (only dicts, "
                                         "lists, tuples, strings, numbers, bools and None are read)");
  CHECK_THROWS_WITH(read_pickle(bytes({0x80, 2, 'C', 1, 'x', '.'})), Catch::Contains("SHORT_BINBYTES"));
  CHECK_THROWS_WITH(read_pickle(bytes({0x80, 2, 0xff, '.'})), Catch::Contains("opcode 0xff"));
  CHECK_THROWS_WITH(read_pickle(bytes({0x80, 1, 'N', '.'})), Catch::Contains("protocol 1"));
  CHECK_THROWS_WITH(read_pickle(bytes({0x80, 2, 'h', 7, '.'})), "byte 2: memo 7 was never stored");
  CHECK_THROWS_WITH(read_pickle(bytes({0x80, 2, 'K', 1, 'K', 2, 'a', '.'})), Catch::Contains("non-list"));
  CHECK_THROWS_WITH(read_pickle(bytes({0x80, 2, '}', ']', 'K', 1, 's', '.'})),
                    Catch::Contains("neither a string nor an int"));
}

TEST_CASE("a dump cut short (NCCL writes its file in place) is truncated, at any byte", "[pickle]") {
  std::string whole = fixture("gloo-2ranks-rank1-sleeps/rank_0");
  REQUIRE_NOTHROW(read_pickle(whole));
  for (size_t n : {size_t{0}, size_t{1}, size_t{7}, whole.size() / 2, whole.size() - 1})
    CHECK_THROWS_WITH(read_pickle(std::string_view(whole).substr(0, n)), Catch::Contains("truncated"));
}
