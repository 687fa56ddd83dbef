#include "health/heat_map_svg.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

namespace gpudirect::launcher::health {
namespace {

std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += static_cast<unsigned char>(c) < 0x20 ? ' ' : c;
    }
  }
  return out;
}

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", value);
  return text;
}

// ratio = busbw / threshold: under 1 red (darker the lower), from 1 to 1.5 yellow to green.
std::string colour(double ratio) {
  int r, g, b;
  if (ratio < 1) {
    const double t = std::clamp(ratio, 0.0, 1.0);
    r = 150 + static_cast<int>(90 * t), g = static_cast<int>(60 * t), b = static_cast<int>(50 * t);
  } else {
    const double t = std::clamp((ratio - 1) / 0.5, 0.0, 1.0);
    r = static_cast<int>(240 - 190 * t), g = static_cast<int>(200 - 20 * t), b = 60;
  }
  char text[16];
  std::snprintf(text, sizeof text, "#%02x%02x%02x", r, g, b);
  return text;
}

}  // namespace

std::string heat_map_svg(const std::vector<NodeVerdict>& nodes, const std::vector<SweepRun>& runs, double threshold,
                         const std::string& title) {
  std::vector<const NodeVerdict*> shown;
  for (const NodeVerdict& n : nodes)
    if (n.verdict != Verdict::skipped) shown.push_back(&n);
  std::map<std::string, std::size_t> index;
  std::size_t longest = 4;
  for (std::size_t i = 0; i < shown.size(); ++i) {
    index[shown[i]->node] = i;
    longest = std::max(longest, shown[i]->node.size());
  }
  const int cell = 56, label = static_cast<int>(longest) * 8 + 16, top = 40 + label, left = label + 10;
  const int grid = static_cast<int>(shown.size()) * cell;
  const int width = std::max(left + grid + 20, 600), height = top + grid + 110;

  std::ostringstream svg;
  svg << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height << "\" viewBox=\"0 0 " << width << ' ' << height
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << "<text x=\"10\" y=\"22\" font-size=\"15\" font-weight=\"bold\">" << escape(title) << "</text>\n";
  // Axis labels: rows on the left, columns rotated on top; bad nodes in red.
  for (std::size_t i = 0; i < shown.size(); ++i) {
    const std::string fill = shown[i]->verdict == Verdict::bad ? "#c00000" : shown[i]->verdict == Verdict::good ? "black" : "#806000";
    const int centre = static_cast<int>(i) * cell + cell / 2;
    svg << "<text x=\"" << left - 6 << "\" y=\"" << top + centre + 4 << "\" text-anchor=\"end\" fill=\"" << fill << "\">"
        << escape(shown[i]->node) << "</text>\n";
    svg << "<text transform=\"translate(" << left + centre + 4 << ',' << top - 6 << ") rotate(-90)\" fill=\"" << fill << "\">"
        << escape(shown[i]->node) << "</text>\n";
  }
  // Empty grid first, then one cell per run in both halves (a later run of the same pair wins).
  for (std::size_t i = 0; i < shown.size(); ++i)
    for (std::size_t j = 0; j < shown.size(); ++j)
      svg << "<rect x=\"" << left + static_cast<int>(j) * cell << "\" y=\"" << top + static_cast<int>(i) * cell << "\" width=\"" << cell
          << "\" height=\"" << cell << "\" fill=\"" << (i == j ? "#d0d0d0" : "#f2f2f2") << "\" stroke=\"white\"/>\n";
  for (const SweepRun& run : runs) {
    if (run.phase == Phase::group || run.nodes.size() != 2 || !index.count(run.nodes[0]) || !index.count(run.nodes[1])) continue;
    const std::size_t a = index[run.nodes[0]], b = index[run.nodes[1]];
    const bool measured = run.outcome == Outcome::measured;
    const std::string fill = measured ? colour(threshold > 0 ? run.busbw / threshold : 1) : "#303030";
    const std::string tip = run.nodes[0] + " + " + run.nodes[1] + ": " + (measured ? number(run.busbw) + " GB/s" : std::string(to_string(run.outcome)) + (run.detail.empty() ? "" : " (" + run.detail + ")")) +
                            " (" + to_string(run.phase) + ")";
    for (const auto& [row, column] : {std::pair{a, b}, std::pair{b, a}}) {
      const int x = left + static_cast<int>(column) * cell, y = top + static_cast<int>(row) * cell;
      svg << "<g><title>" << escape(tip) << "</title><rect x=\"" << x << "\" y=\"" << y << "\" width=\"" << cell << "\" height=\"" << cell
          << "\" fill=\"" << fill << "\" stroke=\"white\"/>";
      svg << "<text x=\"" << x + cell / 2 << "\" y=\"" << y + cell / 2 + 4 << "\" text-anchor=\"middle\" font-size=\"11\" fill=\""
          << (measured && run.busbw >= threshold ? "black" : "white") << "\">" << (measured ? escape(number(run.busbw)) : std::string("x"))
          << "</text></g>\n";
    }
  }
  // Colour scale: 0 .. threshold .. 1.5 x threshold.
  const int scale_y = top + grid + 30, scale_w = 300;
  svg << "<text x=\"10\" y=\"" << scale_y - 8 << "\">all_gather bus bandwidth, GB/s (threshold " << escape(number(threshold))
      << "; dark x: the job failed or timed out)</text>\n";
  for (int k = 0; k < 30; ++k) {
    const double ratio = 1.5 * k / 29.0;
    svg << "<rect x=\"" << 10 + k * scale_w / 30 << "\" y=\"" << scale_y << "\" width=\"" << scale_w / 30 + 1 << "\" height=\"16\" fill=\""
        << colour(ratio) << "\"/>\n";
  }
  for (const double ratio : {0.0, 1.0, 1.5})
    svg << "<text x=\"" << 10 + static_cast<int>(ratio / 1.5 * scale_w) << "\" y=\"" << scale_y + 32 << "\" text-anchor=\"middle\">"
        << escape(number(ratio * threshold)) << "</text>\n";
  svg << "</svg>\n";
  return svg.str();
}

}  // namespace gpudirect::launcher::health
