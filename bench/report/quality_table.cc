#include "bench/report/quality_table.h"

#include <string>

#include "bench/report/names.h"

namespace dlbench::report {
namespace {

constexpr const char* kQualityPrefix = "quality/";

// A ratio as a ratio (3 decimals), BLEU and percentages as their papers print them (2 and 1), a
// count as a count.
std::string shown(const store::MetricRecord& m) {
  return fixed(m.value, m.unit == "ratio" ? 3 : m.unit == "BLEU" ? 2 : m.unit == "percent" ? 1 : 0);
}

}  // namespace

Table quality_table(const std::vector<store::RunRecord>& runs) {
  Table t{"quality",
          "Quality on held-out data",
          "measured after a training run on real data (--data), outside the measured steps: "
          "HR@10 and NDCG@10 rank each user's held-out item among up to 100 unrated ones (beside "
          "a popularity baseline); Dice = 2 |P and G| / (|P| + |G|) per held-out CT case and "
          "class, the mean over the cases; BLEU scores the translations of a given test set "
          "(--test-data) against its targets, corpus BLEU over token ids (clipped 1-4-gram "
          "precisions, brevity penalty)",
          {"run", "model", "precision", "data", "measure", "value", "what"},
          {}};
  for (const store::RunRecord& r : runs)
    for (const store::MetricRecord& m : r.metrics) {
      if (m.tag.rfind(kQualityPrefix, 0) != 0) continue;
      t.rows.push_back({std::to_string(r.id), r.model, precision_label(r.precision),
                        r.result.value("data_description", std::string()),
                        m.tag.substr(std::string(kQualityPrefix).size()), shown(m), m.description});
    }
  return t;
}

}  // namespace dlbench::report
