// A stand-in for libnccl.so.2 for nccl_collectives_test: every entry point
// NcclLibrary resolves, none of which does any communication (communicators
// are made, destroyed and aborted; every collective fails). The version
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
// Communicators are handles into `fake_comms`; destroying and aborting
// count the calls (fake_nccl_calls reads them) so tests can tell which
// teardown a clique chose.
static char fake_comms[64];
static int fake_destroyed = 0;
static int fake_aborted = 0;
Result ncclCommInitAll(void** comms, int count, const int*) {
  if (count < 0 || count > 64) return 4;  // ncclInvalidArgument.
  for (int i = 0; i < count; ++i) comms[i] = &fake_comms[i];
  return 0;
}
Result ncclCommDestroy(void*) {
  ++fake_destroyed;
  return 0;
}
Result ncclCommAbort(void*) {
  ++fake_aborted;
  return 0;
}
// Not NCCL's: how many communicators were destroyed and aborted.
void fake_nccl_calls(int* destroyed, int* aborted) {
  *destroyed = fake_destroyed;
  *aborted = fake_aborted;
}
Result ncclAllReduce(const void*, void*, size_t, int, int, void*, void*) { return 5; }
Result ncclAllGather(const void*, void*, size_t, int, void*, void*) { return 5; }
Result ncclReduceScatter(const void*, void*, size_t, int, int, void*, void*) { return 5; }
Result ncclBroadcast(const void*, void*, size_t, int, int, void*, void*) { return 5; }
Result ncclSend(const void*, size_t, int, int, void*, void*) { return 5; }
Result ncclRecv(void*, size_t, int, int, void*, void*) { return 5; }
Result ncclGroupStart() { return 0; }
Result ncclGroupEnd() { return 0; }

}  // extern "C"
