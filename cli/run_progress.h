// What `dlbench run` says while it works, on stderr. On a terminal: one live line, redrawn in
// place, with the phase, the step, the rate of the last step and the time left:
//   measure step 7/20  24.6 samples/s  elapsed 0:09  left ~0:16
// (with --repeat, each line names the repeat: "repeat 2/3  measure step 7/20 ...").
// Elsewhere (a log, a pipe): plain lines only, no control characters: the first step of each
// phase (every step with --verbose). Either way, once the first step has been timed, a run
// that will take long (a CPU with ImageNet batches: VGG16 at batch 128 on two cores takes about
// a quarter of an hour) says how long first, and how to shorten it.
#pragma once

#include <chrono>
#include <cstdint>
#include <ostream>
#include <string>

namespace dlbench::cli {

struct RunPlan {
  int warmup_steps = 0;
  int steps = 0;       // measured steps; ignored when seconds > 0
  double seconds = 0;  // > 0: measure for this long
  int profile_steps = 0;
  std::int64_t samples_per_step = 0;  // the batch over every replica
  int repeats = 1;                    // --repeat: whole runs, each with the steps above
};

class RunProgress {
 public:
  // live: redraw one line (stderr is a terminal); verbose: a plain line for every step.
  RunProgress(const RunPlan& plan, bool live, bool verbose, std::ostream& out);
  ~RunProgress() { finish(); }  // an error's message must not land on the live line
  RunProgress(const RunProgress&) = delete;
  RunProgress& operator=(const RunProgress&) = delete;
  // Called as a step begins: phase "warm-up", "measure", "profile" or runner::kTestSetPhase (a
  // batch of a translation test set, after training); total -1 when the measured phase is
  // time-bounded.
  void step(const std::string& phase, int step, int total);
  // Called as repeat k (1-based) of plan.repeats begins; the lines then name it.
  void repeat(int k);
  // Erases the live line, before the result is printed.
  void finish();

  // Above this estimate of the time left, the run says so once.
  static constexpr double kLongRunS = 120;

 private:
  using Clock = std::chrono::steady_clock;
  // Seconds left after the step now beginning, at this step time.
  double seconds_left(const std::string& phase, int step, int total, double step_s) const;
  void draw(const std::string& line);

  RunPlan plan_;
  bool live_, verbose_;
  std::ostream& out_;
  Clock::time_point start_ = Clock::now(), last_step_ = start_, measure_start_ = start_;
  std::string phase_;
  int repeat_ = 1;
  // Steps ended since the run (or the repeat) began. The first one measures convolution
  // algorithms and creates primitives (12 s for VGG16 on an H100, whose later steps take
  // 37 ms), so the time-left estimate waits for the second.
  int ended_ = 0;
  bool warned_ = false;
  std::size_t drawn_ = 0;  // length of the live line on screen
};

// "0:09", "15:02", "1:02:03"; "?" when not finite.
std::string clock_text(double seconds);

}  // namespace dlbench::cli
