// Device buffers (hloc.h's Buffer on a CUDA device) and cuda executables
// running on them. The location rules and error paths run everywhere; the
// tests that need a GPU report SKIPPED with the reason where there is none.
// On a GPU each module runs with device buffers (read in place, donated,
// results left on the device and copied back, many threads at once) and is
// compared with the interpreter backend given the same host arrays.
// Registered custom calls (RegisterCustomCall) run on cuda between the GPU's
// steps and are compared with the host backend's results.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "api/hloc.h"
#include "gtest/gtest.h"
#include "runtime/cuda/cuda_device.h"

namespace hloc {
namespace api {
namespace {

using xla::F32;
using xla::S32;

#define SKIP_WITHOUT_GPU()                                               \
  do {                                                                   \
    const std::string reason = BackendUnavailableReason(Backend::kCuda); \
    if (!reason.empty()) GTEST_SKIP() << "no GPU: " << reason;           \
  } while (0)

constexpr char kAdd[] = R"(
HloModule add

ENTRY main {
  x = f32[8] parameter(0)
  y = f32[8] parameter(1)
  sum = f32[8] add(x, y)
  ROOT out = (f32[8]) tuple(sum)
}
)";

// Result 0 may live in parameter 0 (a training step's weights).
constexpr char kAliased[] = R"(
HloModule step, input_output_alias={ {0}: (0, {}, may-alias) }

ENTRY main {
  w = f32[32,32] parameter(0)
  g = f32[32,32] parameter(1)
  d = f32[32,32] dot(w, g), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  next = f32[32,32] add(d, g)
  ROOT out = (f32[32,32]) tuple(next)
}
)";

// A row reduction, an elementwise tail and a second result of another type.
constexpr char kReduceAndCount[] = R"(
HloModule reduce_and_count

add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

add_s32 {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}

ENTRY main {
  x = f32[64,200] parameter(0)
  k = s32[64,200] parameter(1)
  t = f32[64,200] tanh(x)
  zero = f32[] constant(0)
  rows = f32[64] reduce(t, zero), dimensions={1}, to_apply=add_f32
  izero = s32[] constant(0)
  counts = s32[200] reduce(k, izero), dimensions={0}, to_apply=add_s32
  ROOT out = (f32[64], s32[200]) tuple(rows, counts)
}
)";

// Broadcast, transpose and a dot with a bias.
constexpr char kDense[] = R"(
HloModule dense

ENTRY main {
  x = f32[16,48] parameter(0)
  w = f32[32,48] parameter(1)
  b = f32[32] parameter(2)
  wt = f32[48,32] transpose(w), dimensions={1,0}
  y = f32[16,32] dot(x, wt), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[16,32] broadcast(b), dimensions={1}
  z = f32[16,32] add(y, bb)
  ROOT out = (f32[16,32]) tuple(z)
}
)";

std::shared_ptr<Client> NewClient() {
  absl::StatusOr<std::shared_ptr<Client>> client = Client::Create();
  EXPECT_TRUE(client.ok()) << client.status();
  return *client;
}

std::shared_ptr<Executable> CompileOn(Client& client, const char* text, Backend backend) {
  CompileOptions options;
  options.backend = backend;
  absl::StatusOr<std::shared_ptr<Executable>> exe = client.Compile(ModuleSource::Text(text),
                                                                   options);
  EXPECT_TRUE(exe.ok()) << exe.status();
  return exe.ok() ? *exe : nullptr;
}

// Deterministic contents for an argument of `spec` (small values, so sums
// stay exact enough to compare).
Buffer HostArgument(const ArraySpec& spec, int seed) {
  Buffer buffer = *Buffer::AllocateHost(spec.type, spec.dims);
  const int64_t n = spec.byte_size() / 4;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t v = (i * 7 + seed * 13) % 17;
    if (spec.type == F32) {
      static_cast<float*>(buffer.data())[i] = static_cast<float>(v - 8) / 8.0f;
    } else {
      static_cast<int32_t*>(buffer.data())[i] = static_cast<int32_t>(v - 8);
    }
  }
  return buffer;
}

// Compares two host buffers element by element (f32 within a relative
// tolerance for reassociated sums; s32 exactly).
void ExpectNear(const Buffer& expected, const Buffer& actual, const std::string& what) {
  ASSERT_FALSE(actual.on_device()) << what;
  ASSERT_EQ(expected.spec().ToString(), actual.spec().ToString()) << what;
  const int64_t n = expected.byte_size() / 4;
  int mismatches = 0;
  for (int64_t i = 0; i < n && mismatches < 5; ++i) {
    if (expected.type() == F32) {
      const float e = static_cast<const float*>(expected.data())[i];
      const float a = static_cast<const float*>(actual.data())[i];
      if (!(std::fabs(e - a) <= 1e-4f + 1e-4f * std::fabs(e))) {
        ADD_FAILURE() << what << " [" << i << "]: expected " << e << ", got " << a;
        ++mismatches;
      }
    } else {
      const int32_t e = static_cast<const int32_t*>(expected.data())[i];
      const int32_t a = static_cast<const int32_t*>(actual.data())[i];
      if (e != a) {
        ADD_FAILURE() << what << " [" << i << "]: expected " << e << ", got " << a;
        ++mismatches;
      }
    }
  }
}

// ---- everywhere: host buffers' locations and the errors

TEST(DeviceBuffers, HostBuffersAreOnTheHost) {
  float x[4] = {1, 2, 3, 4};
  Buffer b = *Buffer::CopyFromHost(F32, {4}, x);
  EXPECT_TRUE(b.location().is_host());
  EXPECT_EQ(b.location().ToString(), "host");
  EXPECT_FALSE(b.on_device());
  EXPECT_EQ(b.device_pointer(), 0u);
  absl::StatusOr<Buffer> copy = b.ToHost();
  ASSERT_TRUE(copy.ok()) << copy.status();
  EXPECT_NE(copy->data(), b.data());
  float back[4] = {0};
  ASSERT_TRUE(copy->CopyToHost(back).ok());
  EXPECT_EQ(back[3], 4.0f);
  EXPECT_TRUE(absl::IsInvalidArgument(b.CopyToHost(nullptr)));
  EXPECT_TRUE(absl::IsInvalidArgument(Buffer().ToHost().status()));
  EXPECT_TRUE(absl::IsInvalidArgument(Buffer().CopyToHost(back)));
  EXPECT_EQ((Location{Location::Kind::kCuda, 1}).ToString(), "cuda:1");
}

TEST(DeviceBuffers, HostExecutablesRefuseDeviceResults) {
  auto client = NewClient();
  for (Backend backend : {Backend::kHost, Backend::kInterpreter}) {
    SCOPED_TRACE(BackendName(backend));
    auto exe = CompileOn(*client, kAdd, backend);
    ASSERT_NE(exe, nullptr);
    EXPECT_TRUE(exe->location().is_host());
    std::vector<Buffer> args = {HostArgument(exe->parameters()[0], 1),
                                HostArgument(exe->parameters()[1], 2)};
    ExecuteOptions on_device;
    on_device.results = ResultLocation::kDevice;
    absl::StatusOr<std::vector<Buffer>> out = exe->Execute(args, on_device);
    ASSERT_FALSE(out.ok());
    EXPECT_TRUE(absl::IsInvalidArgument(out.status())) << out.status();
    EXPECT_TRUE(absl::StrContains(out.status().message(), "runs on the host")) << out.status();
    // Auto and host leave results on the host.
    for (ResultLocation where : {ResultLocation::kAuto, ResultLocation::kHost}) {
      ExecuteOptions options;
      options.results = where;
      out = exe->Execute(args, options);
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_TRUE((*out)[0].location().is_host());
    }
  }
}

TEST(DeviceBuffers, WithoutAGpuDeviceBuffersAreAClearError) {
  if (BackendUnavailableReason(Backend::kCuda).empty()) {
    GTEST_SKIP() << "a GPU is here: the device tests below cover it";
  }
  auto client = NewClient();
  float x[8] = {0};
  absl::StatusOr<Buffer> allocated = Buffer::AllocateDevice(*client, F32, {8});
  ASSERT_FALSE(allocated.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(allocated.status())) << allocated.status();
  EXPECT_TRUE(absl::StrContains(allocated.status().message(), "cuda:0")) << allocated.status();
  absl::StatusOr<Buffer> copied = Buffer::CopyToDevice(*client, F32, {8}, x);
  EXPECT_TRUE(absl::IsFailedPrecondition(copied.status())) << copied.status();
  Buffer host = *Buffer::CopyFromHost(F32, {8}, x);
  EXPECT_TRUE(absl::IsFailedPrecondition(host.ToDevice(*client).status()));
  // Bad requests are named before the device is looked for.
  EXPECT_TRUE(absl::IsInvalidArgument(Buffer::AllocateDevice(*client, F32, {-1}).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(Buffer::AllocateDevice(*client, F32, {8}, -1).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(Buffer::CopyToDevice(*client, F32, {8}, nullptr).status()));
  absl::StatusOr<Buffer> wrapped = Buffer::WrapDevice(*client, F32, {8}, 0x7f0000000000);
  EXPECT_TRUE(absl::IsFailedPrecondition(wrapped.status())) << wrapped.status();
  EXPECT_TRUE(absl::IsInvalidArgument(Buffer::WrapDevice(*client, F32, {8}, 0).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(Buffer::WrapDevice(*client, F32, {8}, 0x1002).status()));
}

// ---- with a GPU

TEST(DeviceBuffersOnGpu, CopiesRoundTrip) {
  SKIP_WITHOUT_GPU();
  auto client = NewClient();
  std::vector<float> x(1000);
  for (int i = 0; i < 1000; ++i) x[i] = 0.5f * i;
  absl::StatusOr<Buffer> d = Buffer::CopyToDevice(*client, F32, {10, 100}, x.data());
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(d->on_device());
  EXPECT_EQ(d->location().ToString(), "cuda:0");
  EXPECT_EQ(d->data(), nullptr);
  EXPECT_NE(d->device_pointer(), 0u);
  EXPECT_TRUE(d->owned_by_hloc());
  // Device to device, then back to the host two ways.
  absl::StatusOr<Buffer> d2 = d->ToDevice(*client);
  ASSERT_TRUE(d2.ok()) << d2.status();
  EXPECT_NE(d2->device_pointer(), d->device_pointer());
  absl::StatusOr<Buffer> h = d2->ToHost();
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(std::memcmp(h->data(), x.data(), 4000), 0);
  std::vector<float> back(1000, -1);
  ASSERT_TRUE(d->CopyToHost(back.data()).ok());
  EXPECT_EQ(back, x);
  // Zero elements: a buffer all the same.
  absl::StatusOr<Buffer> empty = Buffer::AllocateDevice(*client, F32, {0, 3});
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_TRUE(empty->ToHost().ok());
  // Another device than there is.
  absl::StatusOr<Buffer> far = Buffer::AllocateDevice(*client, F32, {4}, 4096);
  EXPECT_TRUE(absl::IsFailedPrecondition(far.status())) << far.status();
}

TEST(DeviceBuffersOnGpu, HostExecutablesRefuseDeviceArguments) {
  SKIP_WITHOUT_GPU();
  auto client = NewClient();
  auto exe = CompileOn(*client, kAdd, Backend::kHost);
  ASSERT_NE(exe, nullptr);
  Buffer x = HostArgument(exe->parameters()[0], 1);
  Buffer y = *HostArgument(exe->parameters()[1], 2).ToDevice(*client);
  absl::StatusOr<std::vector<Buffer>> out = exe->Execute({x, y});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(out.status())) << out.status();
  EXPECT_TRUE(absl::StrContains(out.status().message(), "argument 1 is on cuda:0"))
      << out.status();
  Buffer result = *Buffer::AllocateDevice(*client, F32, {8});
  absl::Status into = exe->ExecuteInto({x, x}, {result});
  EXPECT_TRUE(absl::IsInvalidArgument(into)) << into;
  EXPECT_TRUE(absl::StrContains(into.message(), "result buffer 0 is on cuda:0")) << into;
}

// Runs `text` on the interpreter with host arrays and on cuda with the same
// arrays on the device every way the API allows, and compares.
void CompareWithInterpreter(const char* text) {
  auto client = NewClient();
  auto cuda = CompileOn(*client, text, Backend::kCuda);
  auto reference = CompileOn(*client, text, Backend::kInterpreter);
  ASSERT_NE(cuda, nullptr);
  ASSERT_NE(reference, nullptr);
  EXPECT_EQ(cuda->location().ToString(), "cuda:0");
  std::vector<Buffer> host_args, device_args;
  for (size_t i = 0; i < cuda->parameters().size(); ++i) {
    host_args.push_back(HostArgument(cuda->parameters()[i], static_cast<int>(i)));
    absl::StatusOr<Buffer> on_device = host_args.back().ToDevice(*client);
    ASSERT_TRUE(on_device.ok()) << on_device.status();
    device_args.push_back(*on_device);
  }
  absl::StatusOr<std::vector<Buffer>> expected = reference->Execute(host_args);
  ASSERT_TRUE(expected.ok()) << expected.status();

  // Device arguments: results stay on the device by default.
  absl::StatusOr<std::vector<Buffer>> out = cuda->Execute(device_args);
  ASSERT_TRUE(out.ok()) << out.status();
  for (size_t j = 0; j < out->size(); ++j) {
    EXPECT_EQ((*out)[j].location().ToString(), "cuda:0");
    ExpectNear((*expected)[j], *(*out)[j].ToHost(), absl::StrCat("device result ", j));
  }
  // Device arguments, host results.
  ExecuteOptions to_host;
  to_host.results = ResultLocation::kHost;
  out = cuda->Execute(device_args, to_host);
  ASSERT_TRUE(out.ok()) << out.status();
  for (size_t j = 0; j < out->size(); ++j) {
    ExpectNear((*expected)[j], (*out)[j], absl::StrCat("host result ", j));
  }
  // Host arguments, device results.
  ExecuteOptions to_device;
  to_device.results = ResultLocation::kDevice;
  out = cuda->Execute(host_args, to_device);
  ASSERT_TRUE(out.ok()) << out.status();
  for (size_t j = 0; j < out->size(); ++j) {
    EXPECT_TRUE((*out)[j].on_device());
    ExpectNear((*expected)[j], *(*out)[j].ToHost(), absl::StrCat("to-device result ", j));
  }
  // Mixed arguments, results into device buffers the caller owns.
  std::vector<Buffer> mixed = device_args;
  mixed[0] = host_args[0];
  std::vector<Buffer> into;
  for (const ArraySpec& spec : cuda->results()) {
    into.push_back(*Buffer::AllocateDevice(*client, spec.type, spec.dims));
  }
  absl::Status ran = cuda->ExecuteInto(mixed, into);
  ASSERT_TRUE(ran.ok()) << ran;
  for (size_t j = 0; j < into.size(); ++j) {
    ExpectNear((*expected)[j], *into[j].ToHost(), absl::StrCat("into result ", j));
  }
  // The device arguments are unchanged by all of that.
  for (size_t i = 0; i < device_args.size(); ++i) {
    Buffer back = *device_args[i].ToHost();
    EXPECT_EQ(std::memcmp(back.data(), host_args[i].data(), back.byte_size()), 0) << i;
  }
}

TEST(DeviceBuffersOnGpu, AddMatchesTheInterpreter) {
  SKIP_WITHOUT_GPU();
  CompareWithInterpreter(kAdd);
}

TEST(DeviceBuffersOnGpu, ReductionsMatchTheInterpreter) {
  SKIP_WITHOUT_GPU();
  CompareWithInterpreter(kReduceAndCount);
}

TEST(DeviceBuffersOnGpu, DenseLayerMatchesTheInterpreter) {
  SKIP_WITHOUT_GPU();
  CompareWithInterpreter(kDense);
}

TEST(DeviceBuffersOnGpu, DonatedDeviceArgumentHoldsTheResult) {
  SKIP_WITHOUT_GPU();
  auto client = NewClient();
  auto exe = CompileOn(*client, kAliased, Backend::kCuda);
  ASSERT_NE(exe, nullptr);
  ASSERT_EQ(exe->AliasedArgument(0), 0) << exe->Report();
  // w = 3, g = 2: every element of w.g is 32 * 6, plus 2.
  std::vector<float> w(1024, 3.0f), g(1024, 2.0f);
  Buffer wd = *Buffer::CopyToDevice(*client, F32, {32, 32}, w.data());
  Buffer gd = *Buffer::CopyToDevice(*client, F32, {32, 32}, g.data());
  auto kept = exe->Execute({wd, gd});
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_NE((*kept)[0].device_pointer(), wd.device_pointer());
  EXPECT_EQ(static_cast<const float*>(wd.ToHost()->data())[0], 3.0f);
  ExecuteOptions donate;
  donate.donated_arguments = {0};
  auto donated = exe->Execute({wd, gd}, donate);
  ASSERT_TRUE(donated.ok()) << donated.status();
  EXPECT_EQ((*donated)[0].device_pointer(), wd.device_pointer());
  EXPECT_EQ(static_cast<const float*>(wd.ToHost()->data())[5], 194.0f);
  EXPECT_EQ(static_cast<const float*>((*kept)[0].ToHost()->data())[5], 194.0f);
  // Donated, results asked for on the host: a fresh host result.
  Buffer wd2 = *Buffer::CopyToDevice(*client, F32, {32, 32}, w.data());
  ExecuteOptions donate_to_host = donate;
  donate_to_host.results = ResultLocation::kHost;
  auto on_host = exe->Execute({wd2, gd}, donate_to_host);
  ASSERT_TRUE(on_host.ok()) << on_host.status();
  EXPECT_FALSE((*on_host)[0].on_device());
  EXPECT_EQ(static_cast<const float*>((*on_host)[0].data())[5], 194.0f);
  // ExecuteInto the donated argument itself.
  Buffer wd3 = *Buffer::CopyToDevice(*client, F32, {32, 32}, w.data());
  ASSERT_TRUE(exe->ExecuteInto({wd3, gd}, {wd3}, donate).ok());
  EXPECT_EQ(static_cast<const float*>(wd3.ToHost()->data())[5], 194.0f);
  // Not donated: writing over a device argument is refused.
  absl::Status over = exe->ExecuteInto({wd3, gd}, {gd});
  EXPECT_TRUE(absl::IsInvalidArgument(over)) << over;
  EXPECT_TRUE(absl::StrContains(over.message(), "shares memory with argument 1")) << over;
  // A donated device buffer passed twice shares memory with itself.
  auto twice = exe->Execute({wd3, wd3}, donate);
  EXPECT_TRUE(absl::IsInvalidArgument(twice.status())) << twice.status();
}

TEST(DeviceBuffersOnGpu, ManyThreadsRunOnDeviceBuffers) {
  SKIP_WITHOUT_GPU();
  auto client = NewClient();
  auto cuda = CompileOn(*client, kReduceAndCount, Backend::kCuda);
  auto reference = CompileOn(*client, kReduceAndCount, Backend::kInterpreter);
  ASSERT_NE(cuda, nullptr);
  ASSERT_NE(reference, nullptr);
  constexpr int kThreads = 8, kRuns = 25;
  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::vector<Buffer> host_args = {HostArgument(cuda->parameters()[0], t),
                                       HostArgument(cuda->parameters()[1], t + 100)};
      absl::StatusOr<std::vector<Buffer>> expected = reference->Execute(host_args);
      if (!expected.ok()) {
        failures[t] = std::string(expected.status().message());
        return;
      }
      for (int run = 0; run < kRuns && failures[t].empty(); ++run) {
        // Fresh device buffers each run (allocation and freeing from many
        // threads), results left on the device and copied back.
        absl::StatusOr<Buffer> x = host_args[0].ToDevice(*client);
        absl::StatusOr<Buffer> k = host_args[1].ToDevice(*client);
        if (!x.ok() || !k.ok()) {
          failures[t] = "ToDevice failed";
          return;
        }
        absl::StatusOr<std::vector<Buffer>> out = cuda->Execute({*x, *k});
        if (!out.ok()) {
          failures[t] = std::string(out.status().message());
          return;
        }
        std::vector<int32_t> counts(200);
        if (!(*out)[1].CopyToHost(counts.data()).ok() ||
            std::memcmp(counts.data(), (*expected)[1].data(), 800) != 0) {
          failures[t] = absl::StrCat("run ", run, ": counts differ");
        }
        absl::StatusOr<Buffer> rows = (*out)[0].ToHost();
        for (int i = 0; rows.ok() && i < 64; ++i) {
          const float e = static_cast<const float*>((*expected)[0].data())[i];
          const float a = static_cast<const float*>(rows->data())[i];
          if (!(std::fabs(e - a) <= 1e-4f + 1e-4f * std::fabs(e))) {
            failures[t] = absl::StrCat("run ", run, ": row ", i, " is ", a, ", expected ", e);
            break;
          }
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], "") << "thread " << t;
}

TEST(DeviceBuffersOnGpu, WrappedDeviceMemoryIsUsedInPlaceAndReleasedOnce) {
  SKIP_WITHOUT_GPU();
  auto client = NewClient();
  auto exe = CompileOn(*client, kAliased, Backend::kCuda);
  ASSERT_NE(exe, nullptr);
  std::vector<float> w(1024, 3.0f), g(1024, 2.0f);
  // Another library's device memory: here hloc's, wrapped a second time.
  Buffer owner = *Buffer::CopyToDevice(*client, F32, {32, 32}, w.data());
  Buffer gd = *Buffer::CopyToDevice(*client, F32, {32, 32}, g.data());
  int releases = 0;
  {
    absl::StatusOr<Buffer> wrapped = Buffer::WrapDevice(
        *client, F32, {32, 32}, owner.device_pointer(), 0, [&releases] { ++releases; });
    ASSERT_TRUE(wrapped.ok()) << wrapped.status();
    EXPECT_FALSE(wrapped->owned_by_hloc());
    EXPECT_EQ(wrapped->location().ToString(), "cuda:0");
    ExecuteOptions donate;
    donate.donated_arguments = {0};
    auto out = exe->Execute({*wrapped, gd}, donate);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].device_pointer(), owner.device_pointer());
    EXPECT_EQ(releases, 0);
  }
  EXPECT_EQ(releases, 1);
  // The result was written into the wrapped memory, which is still owner's.
  EXPECT_EQ(static_cast<const float*>(owner.ToHost()->data())[5], 194.0f);
}

TEST(DeviceBuffersOnGpu, ResultsOutliveTheirExecutable) {
  SKIP_WITHOUT_GPU();
  Buffer kept;
  {
    auto client = NewClient();
    auto exe = CompileOn(*client, kAdd, Backend::kCuda);
    ASSERT_NE(exe, nullptr);
    float ones[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    Buffer x = *Buffer::CopyToDevice(*client, F32, {8}, ones);
    auto out = exe->Execute({x, x});
    ASSERT_TRUE(out.ok()) << out.status();
    kept = (*out)[0];
  }
  float back[8] = {0};
  ASSERT_TRUE(kept.CopyToHost(back).ok());
  EXPECT_EQ(back[7], 2.0f);
}

// ---- device memory shared with other CUDA code (other streams)

// A float whose four bytes are all `byte` (what cuMemsetD8 leaves).
float FloatOfBytes(uint8_t byte) {
  const uint32_t bits = 0x01010101u * byte;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// Another framework's view of the GPU: its own stream on the primary
// context, and a large buffer whose memset keeps that stream busy for a
// while (hundreds of microseconds), so work queued after it is still
// pending when hloc is called.
struct OtherFramework {
  std::unique_ptr<cuda::CudaDevice> device;
  CUdeviceptr busy = 0;
  static constexpr int64_t kBusyBytes = int64_t{1} << 30;

  static std::unique_ptr<OtherFramework> Open() {
    auto other = std::make_unique<OtherFramework>();
    absl::StatusOr<std::unique_ptr<cuda::CudaDevice>> device = cuda::CudaDevice::Open(0);
    EXPECT_TRUE(device.ok()) << device.status();
    if (!device.ok()) return nullptr;
    other->device = *std::move(device);
    absl::StatusOr<CUdeviceptr> busy = other->device->Allocate(kBusyBytes);
    EXPECT_TRUE(busy.ok()) << busy.status();
    if (!busy.ok()) return nullptr;
    other->busy = *busy;
    return other;
  }
  ~OtherFramework() {
    if (device != nullptr && device->MakeCurrent().ok()) {
      (void)device->Synchronize();
      (void)device->Free(busy);
    }
  }
  // Queues a long memset, then nothing returns until the caller syncs.
  void KeepBusy() {
    ASSERT_TRUE(device->MakeCurrent().ok());
    for (int i = 0; i < 4; ++i) ASSERT_TRUE(device->Memset(busy, i, kBusyBytes).ok());
  }
};

TEST(DeviceMemoryOnGpu, ArgumentsWrittenOnAnotherStreamAreWaitedFor) {
  SKIP_WITHOUT_GPU();
  auto client = NewClient();
  auto exe = CompileOn(*client, kAdd, Backend::kCuda);
  ASSERT_NE(exe, nullptr);
  auto other = OtherFramework::Open();
  ASSERT_NE(other, nullptr);
  for (int round = 0; round < 3; ++round) {
    const uint8_t byte = static_cast<uint8_t>(0x3c + round);
    CUdeviceptr x = *other->device->Allocate(32);
    other->KeepBusy();
    // Queued behind the memsets: not done when the Execute below starts
    // unless hloc waits for the device.
    ASSERT_TRUE(other->device->Memset(x, byte, 32).ok());
    absl::StatusOr<Buffer> wrapped =
        Buffer::WrapDevice(*client, F32, {8}, static_cast<uint64_t>(x), 0);
    ASSERT_TRUE(wrapped.ok()) << wrapped.status();
    ExecuteOptions host_results;
    host_results.results = ResultLocation::kHost;
    auto out = exe->Execute({*wrapped, *wrapped}, host_results);
    ASSERT_TRUE(out.ok()) << out.status();
    const float expected = 2 * FloatOfBytes(byte);
    for (int i = 0; i < 8; ++i) {
      EXPECT_EQ(static_cast<const float*>((*out)[0].data())[i], expected) << "round " << round;
    }
    ASSERT_TRUE(other->device->Synchronize().ok());
    ASSERT_TRUE(other->device->Free(x).ok());
  }
}

TEST(DeviceMemoryOnGpu, ReleasedResultsAreReused) {
  SKIP_WITHOUT_GPU();
  auto client = NewClient();
  auto exe = CompileOn(*client, kAdd, Backend::kCuda);
  ASSERT_NE(exe, nullptr);
  std::vector<float> ones(8, 1.0f);
  Buffer x = *Buffer::CopyToDevice(*client, F32, {8}, ones.data());
  std::vector<uint64_t> addresses;
  for (int i = 0; i < 4; ++i) {
    auto out = exe->Execute({x, x});
    ASSERT_TRUE(out.ok()) << out.status();
    addresses.push_back((*out)[0].device_pointer());
    float back[8];
    ASSERT_TRUE((*out)[0].CopyToHost(back).ok());
    EXPECT_EQ(back[3], 2.0f);
  }  // Each result goes before the next call.
  EXPECT_EQ(addresses[1], addresses[0]);
  EXPECT_EQ(addresses[3], addresses[0]);
}

TEST(DeviceMemoryOnGpu, WithoutTheCacheEveryResultIsFreed) {
  SKIP_WITHOUT_GPU();
  ClientOptions options;
  options.device_memory_cache_bytes = 0;
  auto client = *Client::Create(options);
  auto exe = CompileOn(*client, kAdd, Backend::kCuda);
  ASSERT_NE(exe, nullptr);
  std::vector<float> ones(8, 1.0f);
  Buffer x = *Buffer::CopyToDevice(*client, F32, {8}, ones.data());
  for (int i = 0; i < 3; ++i) {
    auto out = exe->Execute({x, x});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(static_cast<const float*>((*out)[0].ToHost()->data())[0], 2.0f);
  }
}

TEST(DeviceMemoryOnGpu, AResultAnotherStreamStillReadsIsNotOverwritten) {
  SKIP_WITHOUT_GPU();
  auto client = NewClient();
  auto exe = CompileOn(*client, kAdd, Backend::kCuda);
  ASSERT_NE(exe, nullptr);
  auto other = OtherFramework::Open();
  ASSERT_NE(other, nullptr);
  std::vector<float> ones(8, 1.0f), fives(8, 5.0f);
  Buffer x1 = *Buffer::CopyToDevice(*client, F32, {8}, ones.data());
  Buffer x5 = *Buffer::CopyToDevice(*client, F32, {8}, fives.data());
  CUdeviceptr copy = *other->device->Allocate(32);
  for (int round = 0; round < 3; ++round) {
    uint64_t first_address = 0;
    {
      auto out = exe->Execute({x1, x1});  // 2s, on the device.
      ASSERT_TRUE(out.ok()) << out.status();
      first_address = (*out)[0].device_pointer();
      // The other framework reads the result on its stream, behind a long
      // memset, then drops its reference (here: the last one goes at the
      // end of this block) before its read has run.
      other->KeepBusy();
      ASSERT_TRUE(other->device->CopyOnDevice(copy, first_address, 32).ok());
    }
    // The released block may come back for this result only once the read
    // above is done.
    auto next = exe->Execute({x5, x5});  // 10s.
    ASSERT_TRUE(next.ok()) << next.status();
    ASSERT_TRUE(other->device->Synchronize().ok());
    float seen[8];
    ASSERT_TRUE(other->device->CopyToHost(seen, copy, 32).ok());
    ASSERT_TRUE(other->device->Synchronize().ok());
    for (int i = 0; i < 8; ++i) EXPECT_EQ(seen[i], 2.0f) << "round " << round;
    EXPECT_EQ(static_cast<const float*>((*next)[0].ToHost()->data())[0], 10.0f);
    (void)first_address;
  }
  ASSERT_TRUE(other->device->Free(copy).ok());
}

// ---- registered custom calls on the GPU

// A kernel before the call (tanh), a tuple result of three leaves of two
// types, and kernels after it reading each leaf.
constexpr char kScaleRowsAndSum[] = R"(
HloModule scale_rows_and_sum

ENTRY main {
  x = f32[64,32] parameter(0)
  n = s32[64] parameter(1)
  t = f32[64,32] tanh(x)
  c = (f32[64,32], f32[64], s32[]) custom-call(t, n), custom_call_target="scale_rows_and_sum", backend_config="3"
  y = f32[64,32] get-tuple-element(c), index=0
  rows = f32[64] get-tuple-element(c), index=1
  total = s32[] get-tuple-element(c), index=2
  z = f32[64,32] add(y, t)
  two = f32[] constant(2)
  twos = f32[64] broadcast(two), dimensions={}
  r = f32[64] multiply(rows, twos)
  ROOT out = (f32[64,32], f32[64], s32[]) tuple(z, r, total)
}
)";

// results: operands[0] * backend_config, its row sums, sum(operands[1]).
absl::Status ScaleRowsAndSum(const CustomCallFrame& call) {
  if (call.target != "scale_rows_and_sum" || call.instruction != "c") {
    return absl::InvalidArgumentError(
        absl::StrCat("called as ", call.target, " for %", call.instruction));
  }
  if (call.operands.size() != 2 || call.results.size() != 3) {
    return absl::InvalidArgumentError("want 2 operands and 3 results");
  }
  float scale = 0;
  if (!absl::SimpleAtof(call.backend_config, &scale)) {
    return absl::InvalidArgumentError(absl::StrCat("bad scale '", call.backend_config, "'"));
  }
  const CustomCallArray& x = call.operands[0];
  const CustomCallArray& n = call.operands[1];
  if (x.type != F32 || x.dims.size() != 2 || n.type != S32 || call.results[0].type != F32 ||
      call.results[1].type != F32 || call.results[2].type != S32) {
    return absl::InvalidArgumentError("unexpected types");
  }
  const int64_t rows = x.dims[0], cols = x.dims[1];
  const float* in = static_cast<const float*>(x.data);
  float* scaled = static_cast<float*>(call.results[0].data);
  float* sums = static_cast<float*>(call.results[1].data);
  for (int64_t i = 0; i < rows; ++i) {
    float sum = 0;
    for (int64_t j = 0; j < cols; ++j) {
      scaled[i * cols + j] = in[i * cols + j] * scale;
      sum += in[i * cols + j];
    }
    sums[i] = sum;
  }
  int32_t total = 0;
  for (int64_t i = 0; i < n.element_count(); ++i) total += static_cast<const int32_t*>(n.data)[i];
  *static_cast<int32_t*>(call.results[2].data) = total;
  return absl::OkStatus();
}

// ScaleRowsAndSum, counting its calls in `calls`.
CustomCallFunction CountedScaleRowsAndSum(std::atomic<int>* calls) {
  return [calls](const CustomCallFrame& call) {
    ++*calls;
    return ScaleRowsAndSum(call);
  };
}

TEST(CustomCallsOnGpu, RegisteredFunctionMatchesTheHost) {
  SKIP_WITHOUT_GPU();
  auto client = NewClient();
  std::atomic<int> calls{0};
  ASSERT_TRUE(
      client->RegisterCustomCall("scale_rows_and_sum", CountedScaleRowsAndSum(&calls)).ok());
  auto cuda = CompileOn(*client, kScaleRowsAndSum, Backend::kCuda);
  auto host = CompileOn(*client, kScaleRowsAndSum, Backend::kHost);
  ASSERT_NE(cuda, nullptr);
  ASSERT_NE(host, nullptr);
  EXPECT_EQ(cuda->stats().interpreter_ops, 0) << cuda->Report();
  EXPECT_TRUE(absl::StrContains(cuda->Report(), "custom-call %c target=\"scale_rows_and_sum\""))
      << cuda->Report();
  std::vector<Buffer> host_args, device_args;
  for (size_t i = 0; i < cuda->parameters().size(); ++i) {
    host_args.push_back(HostArgument(cuda->parameters()[i], static_cast<int>(i)));
    device_args.push_back(*host_args.back().ToDevice(*client));
  }
  absl::StatusOr<std::vector<Buffer>> expected = host->Execute(host_args);
  ASSERT_TRUE(expected.ok()) << expected.status();
  ASSERT_EQ(calls.load(), 1);
  ExecuteOptions to_host;
  to_host.results = ResultLocation::kHost;
  // Host and device arguments, several runs (the program is not a CUDA graph
  // replay: each run calls the function again).
  for (const std::vector<Buffer>* args : {&host_args, &device_args, &device_args}) {
    absl::StatusOr<std::vector<Buffer>> out = cuda->Execute(*args, to_host);
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ(out->size(), expected->size());
    for (size_t j = 0; j < out->size(); ++j) {
      ExpectNear((*expected)[j], (*out)[j], absl::StrCat("result ", j));
    }
  }
  EXPECT_EQ(calls.load(), 4);
}

TEST(CustomCallsOnGpu, TheFunctionsErrorFailsTheRunNamingTheCall) {
  SKIP_WITHOUT_GPU();
  auto client = NewClient();
  ASSERT_TRUE(client
                  ->RegisterCustomCall("scale_rows_and_sum",
                                       [](const CustomCallFrame&) {
                                         return absl::InvalidArgumentError("no thanks");
                                       })
                  .ok());
  auto cuda = CompileOn(*client, kScaleRowsAndSum, Backend::kCuda);
  ASSERT_NE(cuda, nullptr);
  std::vector<Buffer> args;
  for (size_t i = 0; i < cuda->parameters().size(); ++i) {
    args.push_back(HostArgument(cuda->parameters()[i], static_cast<int>(i)));
  }
  for (int run = 0; run < 2; ++run) {
    absl::StatusOr<std::vector<Buffer>> out = cuda->Execute(args);
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument) << out.status();
    EXPECT_TRUE(absl::StrContains(out.status().message(),
                                  "custom-call %c (target \"scale_rows_and_sum\"): no thanks"))
        << out.status();
  }
  // The device is still usable afterwards.
  auto add = CompileOn(*client, kAdd, Backend::kCuda);
  ASSERT_NE(add, nullptr);
  float ones[8] = {1, 1, 1, 1, 1, 1, 1, 1};
  Buffer x = *Buffer::CopyToDevice(*client, F32, {8}, ones);
  absl::StatusOr<std::vector<Buffer>> sum = add->Execute({x, x});
  ASSERT_TRUE(sum.ok()) << sum.status();
  float back[8] = {0};
  ASSERT_TRUE((*sum)[0].CopyToHost(back).ok());
  EXPECT_EQ(back[0], 2.0f);
}

TEST(CustomCallsOnGpu, ExecutablesKeepTheFunctionTheyWereCompiledWith) {
  SKIP_WITHOUT_GPU();
  auto client = NewClient();
  std::atomic<int> first{0}, second{0};
  ASSERT_TRUE(
      client->RegisterCustomCall("scale_rows_and_sum", CountedScaleRowsAndSum(&first)).ok());
  auto before = CompileOn(*client, kScaleRowsAndSum, Backend::kCuda);
  ASSERT_NE(before, nullptr);
  ASSERT_TRUE(
      client->RegisterCustomCall("scale_rows_and_sum", CountedScaleRowsAndSum(&second)).ok());
  auto after = CompileOn(*client, kScaleRowsAndSum, Backend::kCuda);
  ASSERT_NE(after, nullptr);
  EXPECT_NE(before.get(), after.get());  // Not served from the cache.
  std::vector<Buffer> args;
  for (size_t i = 0; i < before->parameters().size(); ++i) {
    args.push_back(HostArgument(before->parameters()[i], static_cast<int>(i)));
  }
  ASSERT_TRUE(before->Execute(args).ok());
  EXPECT_EQ(first.load(), 1);
  EXPECT_EQ(second.load(), 0);
  ASSERT_TRUE(after->Execute(args).ok());
  EXPECT_EQ(first.load(), 1);
  EXPECT_EQ(second.load(), 1);
}

}  // namespace
}  // namespace api
}  // namespace hloc
