// A deliberate data race, for tools/tsan.sh: built with --config=tsan it must
// make ThreadSanitizer report "data race" (and exit non-zero), or the TSan
// run proves nothing about hloc's threaded tests. Two threads write one int
// with nothing ordering them (each is created before the other is joined).
#include <cstdio>
#include <thread>

int main() {
  static int shared = 0;
  std::thread a([] { shared += 1; });
  std::thread b([] { shared += 2; });
  a.join();
  b.join();
  std::printf("shared = %d; built with --config=tsan, a data race was reported above\n", shared);
  return 0;
}
