// memory_child MIB SECONDS: allocates MIB MiB, writes every page so it is resident, holds it
// for SECONDS, then exits.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

int main(int argc, char** argv) {
  std::size_t mib = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 256;
  double seconds = argc > 2 ? std::atof(argv[2]) : 1.0;
  std::size_t bytes = mib << 20;
  auto* block = static_cast<char*>(std::malloc(bytes));
  if (block == nullptr) return 3;
  std::memset(block, 1, bytes);
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  // Read it back so the writes cannot be optimized away.
  long sum = 0;
  for (std::size_t i = 0; i < bytes; i += 4096) sum += block[i];
  std::printf("touched_mib=%zu check=%ld\n", mib, sum);
  std::free(block);
  return 0;
}
