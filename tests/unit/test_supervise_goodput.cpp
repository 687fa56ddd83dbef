#include <catch2/catch.hpp>

#include "supervise/goodput.hpp"

#include "reporting/goodput_metrics.hpp"

using namespace gpudirect::launcher;
using namespace gpudirect::launcher::supervise;

TEST_CASE("goodput: each step counts once, a repeated step's first run is lost to the fault", "[supervise]") {
  Goodput g(100);
  g.relaunched(100);  // the first launch is start-up, no fault's cost
  for (long s = 1; s <= 10; ++s) g.step(s, 500, 100 + 2 + 0.5 * static_cast<double>(s));
  // Last progress at 107 (step 10); the fault is seen at 112; relaunched at 120; the new attempt
  // resumes at step 8 and its first step ends at 124.
  g.fault("rank failure", 107, 112);
  g.taken_out("node2", "unspecified");
  g.relaunched(120);
  g.step(9, 600, 124);
  g.step(10, 500, 124.5);
  g.step(11, 500, 125);
  const metrics::GoodputReport r = g.report(130);
  CHECK(r.wall_seconds == Approx(30));
  CHECK(r.steps == 11);
  CHECK(r.productive_seconds == Approx(0.5 * 9 + 0.6 + 0.5));  // steps 1-8, 10, 11 at 0.5 s and step 9 at 0.6
  CHECK(r.attempts == 2);
  REQUIRE(r.faults.size() == 1);
  const metrics::FaultCost& f = r.faults[0];
  CHECK(f.kind == "rank failure");
  CHECK(f.nodes == std::vector<std::string>{"node2"});
  CHECK(f.reason == "unspecified");
  CHECK(f.reasons == std::vector<std::string>{"unspecified"});
  CHECK(r.last_step == 11);
  CHECK(f.detection_seconds == Approx(5));
  CHECK(f.handling_seconds == Approx(8));
  CHECK(f.restart_seconds == Approx(124 - 120 - 0.6));
  CHECK(f.repeated_steps == 2);
  CHECK(f.repeated_seconds == Approx(1.0));
  CHECK(r.lost_seconds() == Approx(5 + 8 + 3.4 + 1.0));
  CHECK(r.ettr() == Approx(r.productive_seconds / 30));
}

TEST_CASE("goodput: slow steps' time over the normal is lost, not productive", "[supervise]") {
  Goodput g(0);
  g.relaunched(0);
  for (long s = 1; s <= 5; ++s) g.step(s, 1000, static_cast<double>(s));
  g.fault("slow steps", 5, 5, 2.5);
  g.relaunched(9);
  g.step(6, 1000, 11);
  const metrics::GoodputReport r = g.report(12);
  CHECK(r.productive_seconds == Approx(6 - 2.5));
  REQUIRE(r.faults.size() == 1);
  CHECK(r.faults[0].detection_seconds == Approx(2.5));
  CHECK(r.faults[0].handling_seconds == Approx(4));
  CHECK(r.faults[0].restart_seconds == Approx(1));
  CHECK(r.faults[0].repeated_steps == 0);
  CHECK(r.faults[0].nodes.empty());
}

TEST_CASE("goodput metrics: the ETTR, lost time by cause, faults by kind and drains by reason", "[supervise]") {
  metrics::GoodputReport r;
  r.job_id = "42";
  r.wall_seconds = 100;
  r.productive_seconds = 80;
  r.steps = 300;
  r.planned_steps = 400;
  r.attempts = 3;
  r.spare_nodes_left = 1;
  r.last_step = 350;
  r.faults.push_back({"rank failure", {"node2", "node5"}, "unspecified", {"unspecified", "XID"}, 5, 10, 2, 3, 1.5});
  r.faults.push_back({"slow steps", {"node3"}, "PERFORMANCE", {"PERFORMANCE"}, 4, 8, 2, 0, 0});
  r.faults.push_back({"hang", {}, "", {}, 3, 1, 2, 0, 0});
  const std::string text = metrics::goodput_metrics(r).text();
  CHECK(text.find("gpudirect_supervise_ettr_ratio{job_id=\"42\"} 0.8\n") != std::string::npos);
  CHECK(text.find("gpudirect_supervise_lost_seconds{job_id=\"42\",cause=\"detection\"} 12\n") != std::string::npos);
  CHECK(text.find("gpudirect_supervise_lost_seconds{job_id=\"42\",cause=\"repeated_steps\"} 1.5\n") != std::string::npos);
  CHECK(text.find("gpudirect_supervise_faults{job_id=\"42\",kind=\"slow steps\"} 1\n") != std::string::npos);
  CHECK(text.find("gpudirect_supervise_drained_nodes{job_id=\"42\",reason=\"PERFORMANCE\"} 1\n") != std::string::npos);
  CHECK(text.find("gpudirect_supervise_drained_nodes{job_id=\"42\",reason=\"unspecified\"} 1\n") != std::string::npos);
  CHECK(text.find("gpudirect_supervise_drained_nodes{job_id=\"42\",reason=\"XID\"} 1\n") != std::string::npos);  // a bad spare
  CHECK(text.find("gpudirect_supervise_spare_nodes{job_id=\"42\"} 1\n") != std::string::npos);
  CHECK(text.find("gpudirect_supervise_step{job_id=\"42\"} 350\n") != std::string::npos);
  CHECK(r.lost_seconds() == Approx(18.5 + 14 + 6));
}
