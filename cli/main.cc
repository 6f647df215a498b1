#include "cli/app.h"

int main(int argc, char** argv) {
  return dlbench::cli::run(argc, argv);
}
