#include "cli/layer_profile_table.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace dlbench::cli {
namespace {

std::string percent(double ms, double step_ms) {
  char text[32];
  std::snprintf(text, sizeof text, "%5.1f%%", step_ms > 0 ? 100.0 * ms / step_ms : 0.0);
  return text;
}

std::string millis(double ms) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", ms);
  return text;
}

// Column widths: layer names and kinds ("batch_norm+add+relu") as long as the longest.
struct Widths {
  int name, kind;
};

// One row: a name, a kind and right-aligned columns.
void row(std::ostream& out, Widths w, const std::string& name, const std::string& kind,
         const std::vector<std::string>& columns) {
  char text[512];
  std::snprintf(text, sizeof text, "  %-*s  %-*s", w.name, name.c_str(), w.kind, kind.c_str());
  out << text;
  for (const std::string& c : columns) {
    std::snprintf(text, sizeof text, "  %11s", c.c_str());
    out << text;
  }
  out << "\n";
}

}  // namespace

void print_layer_profile(std::ostream& out, const result::LayerProfile& p) {
  const bool train = std::any_of(p.parts.begin(), p.parts.end(),
                                 [](const result::PartTime& part) { return part.name == "loss"; });
  std::size_t width = 24, kind_width = 11;
  for (const auto& l : p.layers)
    width = std::max(width, l.name.size()), kind_width = std::max(kind_width, l.kind.size());
  for (const auto& g : p.gaps) width = std::max(width, g.name.size());
  const Widths w{static_cast<int>(width), static_cast<int>(kind_width)};
  // The by-kind table names kinds in its first column and has no kind column.
  const Widths by_kind{static_cast<int>(kind_width), 0};

  // Inference has no backward column.
  auto columns = [train](std::string forward, std::string backward, std::string total,
                         std::string share) {
    std::vector<std::string> c{std::move(forward)};
    if (train) c.push_back(std::move(backward));
    c.push_back(std::move(total));
    c.push_back(std::move(share));
    return c;
  };
  out << "\nPer-layer time, mean of " << p.steps << " extra step" << (p.steps == 1 ? "" : "s")
      << " after the measured ones; clock: " << p.clock << "\n";
  row(out, w, "layer", "kind", columns("forward ms", "backward ms", "total ms", "share"));
  for (const auto& l : p.layers)
    row(out, w, l.name, l.kind,
        columns(millis(l.forward_ms), millis(l.backward_ms), millis(l.total_ms()),
                percent(l.total_ms(), p.step_ms)));
  for (const auto& part : p.parts)
    row(out, w, part.name, "(part)", columns("", "", millis(part.ms), percent(part.ms, p.step_ms)));
  for (const auto& g : p.gaps)
    row(out, w, g.name, "(gap)", columns("", "", millis(g.ms), percent(g.ms, p.step_ms)));
  row(out, w, "step, first mark to last", "", columns("", "", millis(p.step_ms), percent(1, 1)));
  if (p.nested_ms > 0)
    out << "  (" << millis(p.nested_ms) << " ms of parts ran inside other parts: counted once)\n";
  out << "  A part runs from its begin mark to its end mark on the stream, including time the "
         "device\n  waited for the host; gaps are stream time no part accounts for (between "
         "backward and\n  update: the fp16/bf16 gradient cast and the fp16 finite check). The "
         "marks add work, so\n  these steps run after the measured ones and are not in the "
         "throughput.\n";

  out << "\nTime by kind\n";
  row(out, by_kind, "kind", "", {"layers", "total ms", "share"});
  for (const auto& k : p.kinds)
    row(out, by_kind, k.kind, "",
        {k.count > 0 ? std::to_string(k.count) : "", millis(k.ms), percent(k.share, 1)});

  std::vector<result::LayerTime> top = p.layers;
  std::stable_sort(top.begin(), top.end(),
                   [](const auto& a, const auto& b) { return a.total_ms() > b.total_ms(); });
  top.resize(std::min(top.size(), kTopLayers));
  out << "\nTop " << top.size() << " layers by time\n";
  row(out, w, "layer", "kind", {"total ms", "share"});
  for (const auto& l : top)
    row(out, w, l.name, l.kind, {millis(l.total_ms()), percent(l.total_ms(), p.step_ms)});
}

}  // namespace dlbench::cli
