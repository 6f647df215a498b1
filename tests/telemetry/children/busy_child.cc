// busy_child SECONDS: spins one core for SECONDS of wall time, then prints the CPU time it got
// ("cpu_s=... wall_s=..."), so a test can compare dlbench's figure with the child's own.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  double seconds = argc > 1 ? std::atof(argv[1]) : 1.0;
  auto start = std::chrono::steady_clock::now();
  volatile unsigned long long spins = 0;
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < seconds)
    for (int i = 0; i < 10000; ++i) spins = spins + 1;
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  double cpu = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
               static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("cpu_s=%.4f wall_s=%.4f\n", cpu, wall);
  return 0;
}
