#include <catch2/catch.hpp>

#include "gpudirect/text.hpp"

#include <climits>
#include <stdexcept>
#include <utility>

using namespace gpudirect;

TEST_CASE("trim drops blanks at both ends only", "[text]") {
  CHECK(trim("  a b \t\r\n") == "a b");
  CHECK(trim("") == "");
  CHECK(trim(" \t ") == "");
  CHECK(trim("x") == "x");
}

TEST_CASE("split keeps empty fields", "[text]") {
  CHECK(split("a,b,c", ',') == std::vector<std::string_view>{"a", "b", "c"});
  CHECK(split("a,,b,", ',') == std::vector<std::string_view>{"a", "", "b", ""});
  CHECK(split("", ',') == std::vector<std::string_view>{""});
  CHECK(split("host:80", ':') == std::vector<std::string_view>{"host", "80"});
}

TEST_CASE("parse_integer accepts whole numbers in range", "[text]") {
  CHECK(parse_integer<int>("80", "port", 1, 65535) == 80);
  CHECK(parse_integer<int>("-3", "x", -5, 5) == -3);
  CHECK(parse_integer<int>("0", "x", 0, 0) == 0);
  CHECK(parse_integer<unsigned long long>("18446744073709551615", "x", 0, ULLONG_MAX) == ULLONG_MAX);
  CHECK(parse_integer<unsigned>("ff", "mask", 0, 0xffffffffu, 16) == 255u);
  CHECK(parse_integer<long long>("007", "x", 0, 10) == 7);
}

TEST_CASE("parse_integer refuses junk, signs, blanks, overflow and out of range, naming the field", "[text]") {
  for (const char* bad : {"80x", "", "+", "+80", " 80", "80 ", "-", "0x50", "8 0", "80.0", "1e3", "x80"}) {
    INFO("text '" << bad << "'");
    CHECK_FALSE(try_parse_integer<int>(bad, 0, 65535));
    CHECK_THROWS_WITH(parse_integer<int>(bad, "--rendezvous PORT", 0, 65535),
                      Catch::Contains("--rendezvous PORT") && Catch::Contains(std::string("got '") + bad + "'"));
  }
  CHECK_THROWS_WITH(parse_integer<int>("99999999999", "--np", 1, 1 << 20), "--np: expected an integer in 1..1048576, got '99999999999'");
  CHECK_THROWS_AS(parse_integer<int>("0", "--np", 1, 10), std::invalid_argument);
  CHECK_THROWS_AS(parse_integer<int>("11", "--np", 1, 10), std::invalid_argument);
  CHECK_THROWS_AS(parse_integer<unsigned>("-1", "n", 0, 10), std::invalid_argument);  // no sign for unsigned
  CHECK_THROWS_AS(parse_integer<unsigned long long>("18446744073709551616", "n", 0, ULLONG_MAX), std::invalid_argument);
  CHECK_THROWS_WITH(parse_integer<unsigned>("fg", "mask", 0, 255, 16), Catch::Contains("hexadecimal"));
}

TEST_CASE("host_name is never empty", "[text]") { CHECK_FALSE(host_name().empty()); }

TEST_CASE("decimal numbers are strict too", "[text]") {
  CHECK(try_parse_number("1.5") == 1.5);
  CHECK(try_parse_number("2e3") == 2000.0);
  CHECK(try_parse_number("-1") == -1.0);
  for (const char* bad : {"", "1.5x", " 1", "+1", "nan", "inf", "1e999", "."}) {
    INFO(bad);
    CHECK_FALSE(try_parse_number(bad));
  }
  const auto prefix = parse_number_prefix("64K");
  REQUIRE(prefix);
  CHECK(prefix->first == 64.0);
  CHECK(prefix->second == "K");
  CHECK_FALSE(parse_number_prefix("K64"));
}

TEST_CASE("a number's prefix stops where a decimal number ends", "[text]") {
  const auto cases = {std::pair{"1.", ""},       std::pair{".5s", "s"},    std::pair{"1e", "e"},   std::pair{"1e+", "e+"},
                      std::pair{"2.5E-1x", "x"}, std::pair{"0x10", "x10"}, std::pair{"-3,5", ",5"}};
  for (const auto& [text, rest] : cases) {
    INFO(text);
    const auto prefix = parse_number_prefix(text);
    REQUIRE(prefix);
    CHECK(prefix->second == rest);
  }
  CHECK(parse_number_prefix("2.5E-1x")->first == 0.25);
  CHECK(parse_number_prefix("-3,5")->first == -3.0);
  for (const char* bad : {"-", "-.", "e5", ".e1", "1e-999"}) {
    INFO(bad);
    CHECK_FALSE(try_parse_number(bad));
  }
}

TEST_CASE("join puts the separator between every two items, empty ones included", "[text]") {
  CHECK(gpudirect::join({}) == "");
  CHECK(gpudirect::join({"a"}) == "a");
  CHECK(gpudirect::join({"a", "b", "c"}) == "a,b,c");
  CHECK(gpudirect::join({"", "b"}) == ",b");
  CHECK(gpudirect::join({"node1", "node2"}, ", ") == "node1, node2");
}

TEST_CASE("is_path_within compares whole path components", "[text]") {
  CHECK(is_path_within("/a/b", "/a"));
  CHECK(is_path_within("/a", "/a"));
  CHECK_FALSE(is_path_within("/ab", "/a"));
  CHECK_FALSE(is_path_within("/a", "/a/b"));
}

TEST_CASE("xml_escaped: entities, character references for tab and line breaks, other controls as spaces", "[text]") {
  CHECK(gpudirect::xml_escaped("a&b<c>\"d\"") == "a&amp;b&lt;c&gt;&quot;d&quot;");
  CHECK(gpudirect::xml_escaped("x\ty\nz\r") == "x&#9;y&#10;z&#13;");
  CHECK(gpudirect::xml_escaped(std::string("a\x01"
                                           "b",
                                           3)) == "a b");
  CHECK(gpudirect::xml_escaped("node7 \xc3\xa9") == "node7 \xc3\xa9");  // UTF-8 passes through
}

TEST_CASE("natural_less counts digit runs as numbers", "[text]") {
  CHECK(natural_less("mlx5_9", "mlx5_10"));
  CHECK_FALSE(natural_less("mlx5_10", "mlx5_9"));
  CHECK(natural_less("eth2", "eth10"));
  CHECK(natural_less("mlx5_4", "mlx5_bond_0"));  // '4' < 'b' where a digit meets a letter
  CHECK(natural_less("eth", "eth0"));
  CHECK_FALSE(natural_less("eth0", "eth0"));
  CHECK(natural_less("eth007", "eth7"));  // equal numbers: more leading zeros first, so a strict order
  CHECK_FALSE(natural_less("eth7", "eth007"));
  CHECK(natural_less("n99999999999999999999999", "n100000000000000000000000"));  // longer than any integer type
}
