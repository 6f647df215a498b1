#include "cli/run_progress.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "bench/runner/workload_runner.h"

namespace dlbench::cli {

std::string clock_text(double seconds) {
  if (!std::isfinite(seconds)) return "?";
  const long s = std::lround(std::max(0.0, seconds));
  char text[32];
  if (s >= 3600)
    std::snprintf(text, sizeof text, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
  else
    std::snprintf(text, sizeof text, "%ld:%02ld", s / 60, s % 60);
  return text;
}

RunProgress::RunProgress(const RunPlan& plan, bool live, bool verbose, std::ostream& out)
    : plan_(plan), live_(live), verbose_(verbose), out_(out) {}

double RunProgress::seconds_left(const std::string& phase, int step, int total,
                                 double step_s) const {
  // After the measured steps a translation model's test set is translated (--test-data): its
  // batches are what is left (its length is not known before).
  if (phase == runner::kTestSetPhase) return (total - step + 1) * step_s;
  const double measured = plan_.seconds > 0 ? plan_.seconds : plan_.steps * step_s;
  const double profiled = plan_.profile_steps * step_s;
  // The repeats still to come, each a whole run (their model builds are not counted).
  const double later =
      std::max(0, plan_.repeats - repeat_) * (plan_.warmup_steps * step_s + measured + profiled);
  if (phase == "warm-up")
    return (plan_.warmup_steps - step + 1) * step_s + measured + profiled + later;
  if (phase == "measure") {
    const double in_window =
        plan_.seconds > 0
            ? plan_.seconds - std::chrono::duration<double>(Clock::now() - measure_start_).count()
            : (plan_.steps - step + 1) * step_s;
    return std::max(0.0, in_window) + profiled + later;
  }
  return (plan_.profile_steps - step + 1) * step_s + later;
}

void RunProgress::repeat(int k) {
  repeat_ = k;
  // The first step of a repeat follows a model build, not a step: it has no rate to show.
  phase_.clear();
  ended_ = 0;
}

void RunProgress::step(const std::string& phase, int step, int total) {
  const Clock::time_point now = Clock::now();
  // The step that just ended began at the previous call (of this phase or the one before).
  const double step_s =
      phase_.empty() ? std::nan("") : std::chrono::duration<double>(now - last_step_).count();
  if (phase == "measure" && step == 1) measure_start_ = now;
  if (!phase_.empty()) ++ended_;
  phase_ = phase;
  last_step_ = now;
  const double left = std::isfinite(step_s) && ended_ >= 2
                          ? seconds_left(phase, step, total, step_s)
                          : std::nan("");
  if (!warned_ && std::isfinite(left) && left > kLongRunS) {
    warned_ = true;
    draw("");
    char text[160];
    std::snprintf(text, sizeof text, "%.1f s per step, so about %s to go", step_s,
                  clock_text(left).c_str());
    out_ << "dlbench: this run is long: " << text
         << (phase == runner::kTestSetPhase ? "; a smaller --test-data shortens it\n"
                                            : "; --batch, --steps or --seconds shorten it\n")
         << std::flush;
  }
  std::string where = phase + " step " + std::to_string(step);
  if (plan_.repeats > 1)
    where =
        "repeat " + std::to_string(repeat_) + "/" + std::to_string(plan_.repeats) + "  " + where;
  if (total > 0) where += '/' + std::to_string(total);
  if (!live_) {
    if (verbose_ || step == 1) out_ << "  " << where << "\n" << std::flush;
    return;
  }
  std::string line = where;
  char text[64];
  // A test set's batches are no training steps: no samples/s of them.
  if (std::isfinite(step_s) && step_s > 0 && phase != runner::kTestSetPhase) {
    std::snprintf(text, sizeof text, "  %.2f samples/s",
                  static_cast<double>(plan_.samples_per_step) / step_s);
    line += text;
  }
  line += "  elapsed ";
  line += clock_text(std::chrono::duration<double>(now - start_).count());
  line += "  left ~";
  line += clock_text(left);
  draw(line);
}

void RunProgress::draw(const std::string& line) {
  if (!live_ || (line.empty() && drawn_ == 0)) return;
  const std::string pad(drawn_ > line.size() ? drawn_ - line.size() : 0, ' ');
  out_ << "\r" << line << pad << (line.empty() ? "\r" : "") << std::flush;
  drawn_ = line.size();
}

void RunProgress::finish() {
  draw("");
}

}  // namespace dlbench::cli
