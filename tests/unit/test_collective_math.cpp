#include <catch2/catch.hpp>

#include "bench/check_data.hpp"
#include "bench/collective.hpp"
#include "comm/collective_table.hpp"
#include "comm/reduce_kernels.hpp"

#include <cmath>
#include <cstring>

using namespace gpudirect;
using comm::DataType;
using comm::ReduceOp;

TEST_CASE("float16 and bfloat16 conversions round to nearest even", "[reduce]") {
  CHECK(comm::float_to_half(1.0f) == 0x3c00);
  CHECK(comm::half_to_float(0x3c00) == 1.0f);
  CHECK(comm::float_to_half(65504.0f) == 0x7bff);
  CHECK(comm::float_to_half(1e6f) == 0x7c00);                   // overflow: inf
  CHECK(comm::half_to_float(0x0001) == std::ldexp(1.0f, -24));  // smallest subnormal
  CHECK(comm::float_to_half(std::ldexp(1.0f, -24)) == 0x0001);
  CHECK(comm::float_to_half(1.0f + std::ldexp(1.0f, -11)) == 0x3c00);  // halfway: to even
  CHECK(comm::float_to_half(1.0f + 3 * std::ldexp(1.0f, -11)) == 0x3c02);
  CHECK(std::isnan(comm::half_to_float(comm::float_to_half(std::nanf("")))));
  CHECK(comm::float_to_bfloat16(1.0f) == 0x3f80);
  CHECK(comm::bfloat16_to_float(0x3f80) == 1.0f);
  CHECK(comm::float_to_bfloat16(1.0f + std::ldexp(1.0f, -8)) == 0x3f80);  // halfway: to even
  for (int i = -256; i <= 256; ++i) {                                     // exact in both: 8 significant bits
    CHECK(comm::half_to_float(comm::float_to_half(static_cast<float>(i))) == static_cast<float>(i));
    CHECK(comm::bfloat16_to_float(comm::float_to_bfloat16(static_cast<float>(i) / 2)) == static_cast<float>(i) / 2);
  }
}

TEST_CASE("reduction kernels for every type and op", "[reduce]") {
  std::vector<std::int8_t> a{100, -5, 3}, b{100, 7, -9};
  comm::reduce_into(a.data(), b.data(), 3, DataType::int8, ReduceOp::sum);
  CHECK(a == std::vector<std::int8_t>{static_cast<std::int8_t>(200 - 256), 2, -6});  // wraps
  std::vector<double> x{1, 5}, y{3, 2};
  comm::reduce_into(x.data(), y.data(), 2, DataType::float64, ReduceOp::min);
  CHECK(x == std::vector<double>{1, 2});
  std::vector<std::uint64_t> p{3, 1ull << 40}, q{5, 4};
  comm::reduce_into(p.data(), q.data(), 2, DataType::uint64, ReduceOp::prod);
  CHECK(p == std::vector<std::uint64_t>{15, 1ull << 42});
  std::vector<std::uint16_t> h{comm::float_to_half(1.5f)}, g{comm::float_to_half(2.0f)};
  comm::reduce_into(h.data(), g.data(), 1, DataType::float16, ReduceOp::max);
  CHECK(comm::half_to_float(h[0]) == 2.0f);
  std::vector<std::int32_t> s{7, -7};
  comm::divide_for_average(s.data(), 2, DataType::int32, 2);
  CHECK(s == std::vector<std::int32_t>{3, -3});  // integer average truncates toward zero
}

TEST_CASE("nccl-tests byte accounting", "[bench]") {
  CHECK(bench::parse_size("8") == 8);
  CHECK(bench::parse_size("64K") == 65536);
  CHECK(bench::parse_size("1M") == 1048576);
  CHECK(bench::parse_size("8G") == 8ull << 30);
  CHECK_THROWS(bench::parse_size("12Q"));
  CHECK_THROWS(bench::parse_size("big"));
  CHECK(bench::size_sequence(8, 64, 2, 0) == std::vector<std::size_t>{8, 16, 32, 64});
  CHECK(bench::size_sequence(100, 400, 2, 100) == std::vector<std::size_t>{100, 200, 300, 400});
  CHECK_THROWS(bench::size_sequence(64, 8, 2, 0));
  CHECK(comm::info_of(comm::Collective::all_reduce).bus_factor(16) == Approx(1.875));
  CHECK(comm::info_of(comm::Collective::all_gather).bus_factor(16) == Approx(0.9375));
  CHECK(comm::info_of(comm::Collective::broadcast).bus_factor(16) == 1.0);
  const auto gather = bench::row_shape(comm::Collective::all_gather, 1000, 4, 3);  // 250 elements, 83 per rank
  CHECK(gather.call_count == 83);
  CHECK(gather.shown_count == 249);
  CHECK(gather.shown_bytes == 996);
  CHECK(gather.recv_elements == 249);
  const auto reduce = bench::row_shape(comm::Collective::all_reduce, 1000, 4, 3);
  CHECK(reduce.call_count == 250);
  CHECK(*comm::parse_collective("all_reduce_perf") == comm::Collective::all_reduce);
  CHECK(*comm::parse_collective("allgather") == comm::Collective::all_gather);
  CHECK_FALSE(comm::parse_collective("gather"));
}

TEST_CASE("check data: expected results follow from every rank's inputs", "[bench]") {
  const auto shape = bench::row_shape(comm::Collective::all_reduce, 40, 4, 3);
  const auto expected = bench::expected_output(comm::Collective::all_reduce, shape, DataType::float32, ReduceOp::sum, 0, 3, 0);
  for (std::size_t i = 0; i < shape.call_count; ++i) {
    float value;
    std::memcpy(&value, expected.data() + i * 4, 4);
    const double sum =
        bench::input_value(0, i, ReduceOp::sum) + bench::input_value(1, i, ReduceOp::sum) + bench::input_value(2, i, ReduceOp::sum);
    CHECK(value == static_cast<float>(sum));
  }
  std::vector<char> wrong = expected;
  wrong[5] ^= 1;
  CHECK(bench::count_wrong(wrong, expected, 4) == 1);
  CHECK(bench::count_wrong(expected, expected, 4) == 0);
}
