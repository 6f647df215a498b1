#include "bench/result/layer_profile.h"

namespace dlbench::result {
namespace {

double share_of(double ms, double step_ms) {
  return step_ms > 0 ? ms / step_ms : 0.0;
}

}  // namespace

nlohmann::json to_json(const LayerProfile& p) {
  using nlohmann::json;
  json layers = json::array(), parts = json::array(), gaps = json::array(), kinds = json::array();
  for (const LayerTime& l : p.layers)
    layers.push_back({{"name", l.name},
                      {"kind", l.kind},
                      {"forward_ms", l.forward_ms},
                      {"backward_ms", l.backward_ms},
                      {"total_ms", l.total_ms()},
                      {"share", share_of(l.total_ms(), p.step_ms)}});
  for (const PartTime& part : p.parts)
    parts.push_back(
        {{"name", part.name}, {"ms", part.ms}, {"share", share_of(part.ms, p.step_ms)}});
  for (const PartTime& g : p.gaps)
    gaps.push_back({{"name", g.name}, {"ms", g.ms}, {"share", share_of(g.ms, p.step_ms)}});
  for (const KindTime& k : p.kinds)
    kinds.push_back({{"kind", k.kind}, {"layers", k.count}, {"ms", k.ms}, {"share", k.share}});
  return {{"steps", p.steps},
          {"clock", p.clock},
          {"measured",
           "extra steps after the measured ones (the marks add work, so they never run inside "
           "the measured window); milliseconds are means per step"},
          {"step_ms", p.step_ms},
          {"layers_ms", p.layers_ms},
          {"parts_ms", p.parts_ms},
          {"gaps_ms", p.gaps_ms},
          {"nested_ms", p.nested_ms},
          {"layers", layers},
          {"parts", parts},
          {"gaps", gaps},
          {"kinds", kinds}};
}

}  // namespace dlbench::result
