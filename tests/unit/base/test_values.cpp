#include "catch.hpp"

#include "base/values.hpp"

using namespace ddpctl;

TEST_CASE("Slurm time limits in every form Slurm accepts") {
  std::string p;
  CHECK(parse_slurm_time("30", &p) == 30 * 60);
  CHECK(parse_slurm_time("90", &p) == 90 * 60);
  CHECK(parse_slurm_time("10:30", &p) == 10 * 60 + 30);
  CHECK(parse_slurm_time("02:00:00", &p) == 7200);
  CHECK(parse_slurm_time("1-12", &p) == 36 * 3600);
  CHECK(parse_slurm_time("1-12:30", &p) == 36 * 3600 + 1800);
  CHECK(parse_slurm_time("2-00:00:05", &p) == 2 * 86400 + 5);
  for (const char* bad : {"", "abc", "1:2:3:4", "01:60:00", "1-24", "-5", "1.5", "0", "00:00:00", "9999-00",
                          "99999999999999999999"}) {
    INFO(bad);
    CHECK_FALSE(parse_slurm_time(bad, &p));
  }
  CHECK_FALSE(parse_slurm_time("UNLIMITED", &p));
  CHECK(p.find("finite") != std::string::npos);
}

TEST_CASE("time limits format as D-HH:MM:SS") {
  CHECK(format_slurm_time(7200) == "02:00:00");
  CHECK(format_slurm_time(86400 + 61) == "1-00:01:01");
}

TEST_CASE("memory sizes with Slurm's units") {
  std::string p;
  CHECK(parse_memory_mib("64G", &p) == 65536);
  CHECK(parse_memory_mib("64GB", &p) == 65536);
  CHECK(parse_memory_mib("64GiB", &p) == 65536);
  CHECK(parse_memory_mib("2048", &p) == 2048);  // Slurm's default unit is M
  CHECK(parse_memory_mib("1T", &p) == 1024 * 1024);
  CHECK(parse_memory_mib("512m", &p) == 512);
  CHECK(parse_memory_mib("0", &p) == 0);  // Slurm: all of the node's memory
  for (const char* bad : {"", "G", "1.5G", "64 G", "64X", "-1G", "999999999999999999T", "100K"}) {
    INFO(bad);
    CHECK_FALSE(parse_memory_mib(bad, &p));
  }
  CHECK(format_memory(65536) == "64G");
  CHECK(format_memory(1536) == "1536M");
  CHECK(format_memory(1024 * 1024) == "1T");
}

TEST_CASE("integers are strict") {
  std::string p;
  CHECK(parse_int("4", 1, 8, &p) == 4);
  CHECK_FALSE(parse_int("9", 1, 8, &p));
  CHECK(p == "must be an integer from 1 to 8");
  for (const char* bad : {"", "0x10", "1e3", "4.0", " 4", "+4", "99999999999999999999999"}) {
    INFO(bad);
    CHECK_FALSE(parse_int(bad, 0, 1000, &p));
  }
}

TEST_CASE("numbers, names and booleans") {
  for (const char* ok : {"0.1", "1e-4", "5", ".5", "-3.0E+2"}) CHECK(is_decimal_number(ok));
  for (const char* bad : {"", ".", "e5", "1e", "0x1", "nan", "inf", "1,5"}) CHECK_FALSE(is_decimal_number(bad));
  CHECK(is_slurm_name("a100-80gb"));
  CHECK_FALSE(is_slurm_name("-p"));
  CHECK_FALSE(is_slurm_name("a b"));
  CHECK(is_env_name("_A1"));
  CHECK_FALSE(is_env_name("1A"));
  CHECK_FALSE(is_env_name("A-B"));
  std::string p;
  CHECK(parse_bool("Yes", &p) == true);
  CHECK(parse_bool("off", &p) == false);
  CHECK_FALSE(parse_bool("1", &p));
}

TEST_CASE("spans: one limit whatever the unit, and the seconds form of any span reads back") {
  std::string problem;
  CHECK(parse_span("30s", &problem) == 30);
  CHECK(parse_span("10m", &problem) == 600);
  CHECK(parse_span("2777h", &problem) == 9997200);
  CHECK_FALSE(parse_span("2778h", &problem));
  CHECK(problem == "is longer than 10000000s (115 days), the longest span ddpctl and its job agent take");
  CHECK_FALSE(parse_span("166667m", &problem));
  CHECK(parse_span(std::to_string(kMaxSpanSeconds) + "s", &problem) == kMaxSpanSeconds);
  // The script hands the agent "<seconds>s" (render.cpp): every span that
  // parses, parses again in that form.
  for (const char* s : {"1s", "45", "90m", "2777h", "166666m", "10000000s"}) {
    INFO(s);
    auto v = parse_span(s, &problem);
    REQUIRE(v);
    CHECK(parse_span(std::to_string(*v) + "s", &problem) == v);
  }
}
