#include "bench/report/max_batch_view.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "bench/report/chart_spec.h"
#include "bench/report/names.h"
#include "bench/store/max_batch.h"

namespace dlbench::report {

const char* const kDoesNotFit = "does not fit even at batch 1";

namespace {

using store::RunRecord;

std::string key_of(const RunRecord& r) {
  return std::to_string(r.machine.id) + "|" + r.device + "|" + r.model + "|" + r.mode + "|" +
         r.precision + "|" + std::to_string(r.input_size) + "|" + std::to_string(r.beam());
}

// The newest search of each configuration, in the order their first search appears.
std::vector<const RunRecord*> newest_searches(const ReportData& d) {
  std::vector<std::string> order;
  std::map<std::string, const RunRecord*> newest;
  for (const RunRecord& r : d.max_batch_runs) {
    if (r.status != "ok") continue;
    const std::string key = key_of(r);
    if (!newest.count(key)) order.push_back(key);
    if (!newest.count(key) || newest[key]->created_unix_s <= r.created_unix_s) newest[key] = &r;
  }
  std::vector<const RunRecord*> rows;
  for (const std::string& key : order) rows.push_back(newest[key]);
  return rows;
}

bool capped(const RunRecord& r) {
  return r.result.value("capped", false);
}

std::string batch_text(const RunRecord& r) {
  if (r.batch == 0) return kDoesNotFit;
  return std::to_string(r.batch) + (capped(r) ? " (cap)" : "");
}

// The smallest batch that ran out of memory; empty when none did (or an older search).
std::string failure_text(const RunRecord& r) {
  const auto it = r.result.find("smallest_failure");
  return it != r.result.end() && it->is_number_integer() ? std::to_string(it->get<std::int64_t>())
                                                         : "";
}

std::string number_or_empty(double v, int digits) {
  return std::isfinite(v) ? fixed(v, digits) : "";
}

}  // namespace

Table max_batch_table(const ReportData& d) {
  const std::map<std::int64_t, std::string> names = machine_names(d.machines);
  Table t{"max_batch",
          "Largest batch",
          "the largest batch that completed its warm-up and measured steps without running out "
          "of memory (dlbench maxbatch); predicted: from the planner's memory (fixed + per "
          "sample) and the budget; peak: the allocator's peak over the measured steps at that "
          "batch; (cap): the --max-batch cap fit, so a larger batch may too; smallest failure: the "
          "smallest batch that ran out of memory (batches between the two were not tried when "
          "the search stopped within its --within percent)",
          {"model", "mode", "precision", "input", "device", "machine", "largest batch",
           "smallest failure", "predicted batch", "peak GiB", "predicted GiB", "samples/s",
           "attempts", "search s", "run"},
          {}};
  t.text_columns = {"largest batch"};
  for (const RunRecord* r : newest_searches(d)) {
    auto machine = names.find(r->machine.id);
    t.rows.push_back(
        {r->model, store::searched_mode(*r) + (r->beam() > 1 ? " " + r->beam_text() : ""),
         r->precision, std::to_string(r->input_size), r->device,
         machine != names.end() ? machine->second : machine_name(r->machine), batch_text(*r),
         failure_text(*r), number_or_empty(metric(*r, "max_batch/predicted_batch"), 0),
         number_or_empty(metric(*r, "memory/allocated_peak_gib"), 2),
         number_or_empty(metric(*r, "memory/predicted_peak_gib"), 2),
         r->batch > 0 ? fixed(r->throughput, 1) : "",
         number_or_empty(metric(*r, "max_batch/attempts"), 0),
         number_or_empty(metric(*r, "max_batch/search_s"), 1), std::to_string(r->id)});
  }
  return t;
}

void max_batch_charts(const ReportData& d, nlohmann::json& charts) {
  const std::vector<const RunRecord*> rows = newest_searches(d);
  const std::map<std::int64_t, std::string> names = machine_short_names(d.machines);
  for (const char* mode : {"train", "infer"}) {
    std::vector<std::string> labels, precisions;
    std::map<std::string, std::map<std::string, double>> value;  // label -> precision -> batch
    std::map<std::string, std::vector<std::string>> no_fit;      // label -> precisions
    for (const RunRecord* r : rows) {
      if (store::searched_mode(*r) != mode) continue;
      std::string label = model_label(r->model) +
                          (r->input_size ? " " + r->input_size_text() : "") +
                          (r->beam() > 1 ? " " + r->beam_text() : "");
      if (d.machines.size() > 1) label += " \xC2\xB7 " + names.at(r->machine.id);
      if (std::find(labels.begin(), labels.end(), label) == labels.end()) labels.push_back(label);
      if (std::find(precisions.begin(), precisions.end(), r->precision) == precisions.end())
        precisions.push_back(r->precision);
      value[label][r->precision] = static_cast<double>(r->batch);
      if (r->batch == 0) no_fit[label].push_back(r->precision);
    }
    if (labels.empty()) continue;
    std::vector<BarSet> sets;
    for (const std::string& p : precisions) {
      BarSet set{p, {}, precision_color(p)};
      for (const std::string& l : labels)
        set.values.push_back(value[l].count(p) ? value[l][p] : std::nan(""));
      sets.push_back(std::move(set));
    }
    // A bar of 0 is easy to miss: the category says it in words.
    for (std::string& l : labels) {
      if (!no_fit.count(l)) continue;
      std::string which;
      for (const std::string& p : no_fit[l]) which += (which.empty() ? "" : ", ") + p;
      l += " (" + which + ": " + kDoesNotFit + ")";
    }
    charts.push_back(bar_chart("Largest batch",
                               std::string("Largest batch that fits, ") +
                                   (std::string(mode) == "train" ? "training" : "inference"),
                               "batch (samples)", labels, sets));
  }
}

}  // namespace dlbench::report
