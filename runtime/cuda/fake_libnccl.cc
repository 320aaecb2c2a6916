// A stand-in for libnccl.so.2 for nccl_collectives_test: every entry point
// NcclLibrary resolves, none of which does any communication. The version
// and error strings are the fake's own, so a test can tell that the loader
// called into this file.
#include <cstddef>

extern "C" {

using Result = int;

Result ncclGetVersion(int* version) {
  *version = 29901;
  return 0;
}
const char* ncclGetErrorString(Result result) {
  return result == 3 ? "fake internal error" : "fake error";
}
Result ncclGetUniqueId(void*) { return 5; }
Result ncclCommInitRank(void**, int, ...) { return 5; }
Result ncclCommInitAll(void**, int, const int*) { return 5; }
Result ncclCommDestroy(void*) { return 0; }
Result ncclAllReduce(const void*, void*, size_t, int, int, void*, void*) { return 5; }
Result ncclAllGather(const void*, void*, size_t, int, void*, void*) { return 5; }
Result ncclReduceScatter(const void*, void*, size_t, int, int, void*, void*) { return 5; }
Result ncclBroadcast(const void*, void*, size_t, int, int, void*, void*) { return 5; }
Result ncclSend(const void*, size_t, int, int, void*, void*) { return 5; }
Result ncclRecv(void*, size_t, int, int, void*, void*) { return 5; }
Result ncclGroupStart() { return 0; }
Result ncclGroupEnd() { return 0; }

}  // extern "C"
