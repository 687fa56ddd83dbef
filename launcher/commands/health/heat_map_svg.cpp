#include "health/heat_map_svg.hpp"

#include "number_text.hpp"

#include "gpudirect/text.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

namespace gpudirect::launcher::health {
namespace {

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

// A run's fill, tooltip and short label.
struct RunLook {
  std::string fill, tip, label;
  bool dark_text = false;
};

RunLook look(const SweepRun& run, double threshold) {
  const bool measured = run.outcome == Outcome::measured;
  std::string names;
  for (const std::string& node : run.nodes) names += (names.empty() ? "" : " + ") + node;
  RunLook out;
  out.fill = measured ? colour(threshold > 0 ? run.busbw / threshold : 1) : "#303030";
  out.tip = names + ": " +
            (measured ? short_number(run.busbw) + " GB/s"
                      : std::string(to_string(run.outcome)) + (run.detail.empty() ? "" : " (" + run.detail + ")")) +
            " (" + to_string(run.phase) + ")";
  out.label = measured ? short_number(run.busbw) : std::string("x ") + to_string(run.outcome);
  out.dark_text = measured && run.busbw >= threshold;
  return out;
}

const char* verdict_colour(Verdict verdict) {
  switch (verdict) {
    case Verdict::good:
      return "#2e9e3e";
    case Verdict::bad:
      return "#c00000";
    default:
      return "#c09000";  // suspect, untested: undecided
  }
}

}  // namespace

std::string heat_map_svg(const std::vector<NodeVerdict>& nodes, const std::vector<SweepRun>& runs, double threshold,
                         const std::string& title) {
  std::vector<const NodeVerdict*> shown;
  for (const NodeVerdict& n : nodes)
    if (n.verdict != Verdict::skipped) shown.push_back(&n);
  std::size_t lines = 1;
  for (const NodeVerdict* n : shown) lines = std::max(lines, n->runs.size());

  const int columns = static_cast<int>(std::clamp<std::size_t>(shown.size(), 1, 8));
  const int rows = (static_cast<int>(shown.size()) + columns - 1) / columns;
  const int tile_w = 176, line_h = 16, tile_h = 30 + static_cast<int>(lines) * line_h, gap = 8, left = 10, top = 40;
  const int strip = columns * (tile_w + gap) - gap;

  // Groups by size, each row in the nodes' order (runs are appended as their jobs end).
  std::map<std::string, std::size_t> position;
  for (std::size_t i = 0; i < nodes.size(); ++i) position.emplace(nodes[i].node, i);
  const auto first_node = [&](const SweepRun* run) {
    const auto at = position.find(run->nodes.front());
    return at == position.end() ? nodes.size() : at->second;
  };
  std::map<std::size_t, std::vector<const SweepRun*>> groups;
  std::size_t group_nodes = 1;
  for (const SweepRun& run : runs)
    if (run.phase == Phase::group && !run.nodes.empty()) groups[run.nodes.size()].push_back(&run);
  for (auto& [size, list] : groups) {
    std::stable_sort(list.begin(), list.end(), [&](const SweepRun* a, const SweepRun* b) { return first_node(a) < first_node(b); });
    group_nodes = std::max(group_nodes, size * list.size());
  }
  const int groups_top = top + rows * (tile_h + gap) + 24, group_h = 22;
  const int groups_h = groups.empty() ? 0 : 24 + static_cast<int>(groups.size()) * (group_h + 6);
  const int scale_y = groups_top + groups_h + 28;
  const int width = std::max(left + strip + 90, 600), height = scale_y + 50;

  std::ostringstream svg;
  svg << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height << "\" viewBox=\"0 0 " << width << ' '
      << height << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << "<text x=\"" << left << "\" y=\"22\" font-size=\"15\" font-weight=\"bold\">" << xml_escaped(title) << "</text>\n";

  // Tiles: the node's name (red when bad) and verdict, then one line per pair run (a later run of
  // the same peer is a separate line: the second pass may repeat a first-pass peer).
  for (std::size_t i = 0; i < shown.size(); ++i) {
    const NodeVerdict& n = *shown[i];
    const int x = left + static_cast<int>(i) % columns * (tile_w + gap), y = top + static_cast<int>(i) / columns * (tile_h + gap);
    svg << "<rect x=\"" << x << "\" y=\"" << y << "\" width=\"" << tile_w << "\" height=\"" << tile_h
        << "\" fill=\"#f6f6f6\" stroke=\"#d0d0d0\"/>\n"
        << "<rect x=\"" << x << "\" y=\"" << y << "\" width=\"6\" height=\"" << tile_h << "\" fill=\"" << verdict_colour(n.verdict)
        << "\"/>\n"
        << "<text x=\"" << x + 12 << "\" y=\"" << y + 17 << "\" font-weight=\"bold\" fill=\""
        << (n.verdict == Verdict::bad ? "#c00000" : "black") << "\">" << xml_escaped(n.node) << "</text>\n"
        << "<text x=\"" << x + tile_w - 6 << "\" y=\"" << y + 17 << "\" text-anchor=\"end\" font-size=\"11\" fill=\""
        << verdict_colour(n.verdict) << "\">" << to_string(n.verdict) << "</text>\n";
    int line = 0;
    for (const std::size_t r : n.runs) {
      const SweepRun& run = runs[r];
      const RunLook l = look(run, threshold);
      const int ly = y + 24 + line++ * line_h;
      svg << "<g><title>" << xml_escaped(l.tip) << "</title><rect x=\"" << x + 12 << "\" y=\"" << ly << "\" width=\"" << tile_w - 18
          << "\" height=\"" << line_h - 2 << "\" fill=\"" << l.fill << "\"/><text x=\"" << x + 16 << "\" y=\"" << ly + 11
          << "\" font-size=\"11\" fill=\"" << (l.dark_text ? "black" : "white") << "\">" << xml_escaped(peer_of(run, n.node))
          << "</text><text x=\"" << x + tile_w - 10 << "\" y=\"" << ly + 11 << "\" text-anchor=\"end\" font-size=\"11\" fill=\""
          << (l.dark_text ? "black" : "white") << "\">" << xml_escaped(l.label) << "</text></g>\n";
    }
  }

  // Groups: a row per size, each group a bar as wide as its share of the nodes.
  if (!groups.empty())
    svg << "<text x=\"" << left << "\" y=\"" << groups_top << "\" font-weight=\"bold\">groups (--groups): all_gather busbw, GB/s</text>\n";
  int row = 0;
  for (const auto& [size, list] : groups) {
    const int y = groups_top + 12 + row++ * (group_h + 6);
    svg << "<text x=\"" << left + strip + 8 << "\" y=\"" << y + 15 << "\">" << size << " nodes</text>\n";
    double at = 0;
    for (const SweepRun* run : list) {
      const RunLook l = look(*run, threshold);
      const double w = static_cast<double>(strip) * static_cast<double>(size) / static_cast<double>(group_nodes);
      svg << "<g class=\"group\"><title>" << xml_escaped(l.tip) << "</title><rect x=\"" << left + static_cast<int>(at) << "\" y=\"" << y
          << "\" width=\"" << std::max(1, static_cast<int>(w) - 2) << "\" height=\"" << group_h << "\" fill=\"" << l.fill << "\"/>";
      if (w >= 44)
        svg << "<text x=\"" << left + static_cast<int>(at + w / 2) << "\" y=\"" << y + 15
            << "\" text-anchor=\"middle\" font-size=\"11\" fill=\"" << (l.dark_text ? "black" : "white") << "\">"
            << xml_escaped(run->outcome == Outcome::measured ? l.label : std::string("x")) << "</text>";
      svg << "</g>\n";
      at += w;
    }
  }

  // Colour scale: 0 .. threshold .. 1.5 x threshold.
  const int scale_w = 300;
  svg << "<text x=\"" << left << "\" y=\"" << scale_y - 8 << "\">all_gather bus bandwidth, GB/s (threshold "
      << xml_escaped(short_number(threshold)) << "; dark x: the job failed or timed out; hover for the numbers)</text>\n";
  for (int k = 0; k < 30; ++k) {
    const double ratio = 1.5 * k / 29.0;
    svg << "<rect x=\"" << left + k * scale_w / 30 << "\" y=\"" << scale_y << "\" width=\"" << scale_w / 30 + 1
        << "\" height=\"16\" fill=\"" << colour(ratio) << "\"/>\n";
  }
  for (const double ratio : {0.0, 1.0, 1.5})
    svg << "<text x=\"" << left + static_cast<int>(ratio / 1.5 * scale_w) << "\" y=\"" << scale_y + 32 << "\" text-anchor=\"middle\">"
        << xml_escaped(short_number(ratio * threshold)) << "</text>\n";
  svg << "</svg>\n";
  return svg.str();
}

}  // namespace gpudirect::launcher::health
