// PJRT errors (absl::Status behind a handle; PJRT's codes are absl's numbers)
// and events, plus the element-type mapping every other file uses.
#include <condition_variable>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "api/pjrt/pjrt_objects.h"

namespace hloc {
namespace pjrt {

static_assert(static_cast<int>(absl::StatusCode::kUnimplemented) == PJRT_Error_Code_UNIMPLEMENTED,
              "PJRT error codes are absl's status codes");
static_assert(static_cast<int>(absl::StatusCode::kUnauthenticated) ==
                  PJRT_Error_Code_UNAUTHENTICATED,
              "PJRT error codes are absl's status codes");

PJRT_Error* MakeError(absl::Status status) {
  if (status.ok()) return nullptr;
  return new PJRT_Error{std::move(status)};
}

PJRT_Error* Unimplemented(const char* function) {
  return MakeError(absl::UnimplementedError(
      absl::StrCat(function, " is not implemented by hloc's PJRT plugin")));
}

PJRT_Event* MakeReadyEvent(absl::Status status) {
  auto state = std::make_shared<PJRT_EventState>();
  state->ready = true;
  state->status = std::move(status);
  return new PJRT_Event{std::move(state)};
}

void ErrorDestroy(PJRT_Error_Destroy_Args* args) { delete args->error; }

void ErrorMessage(PJRT_Error_Message_Args* args) {
  absl::string_view text = args->error->status.message();
  args->message = text.data();
  args->message_size = text.size();
}

PJRT_Error* ErrorGetCode(PJRT_Error_GetCode_Args* args) {
  args->code = static_cast<PJRT_Error_Code>(args->error->status.code());
  return nullptr;
}

PJRT_Error* EventDestroy(PJRT_Event_Destroy_Args* args) {
  delete args->event;
  return nullptr;
}

PJRT_Error* EventIsReady(PJRT_Event_IsReady_Args* args) {
  std::lock_guard<std::mutex> lock(args->event->state->mu);
  args->is_ready = args->event->state->ready;
  return nullptr;
}

PJRT_Error* EventError(PJRT_Event_Error_Args* args) {
  PJRT_EventState& state = *args->event->state;
  std::lock_guard<std::mutex> lock(state.mu);
  if (!state.ready) {
    return MakeError(absl::FailedPreconditionError("PJRT_Event_Error on an event not yet ready"));
  }
  return MakeError(state.status);
}

PJRT_Error* EventAwait(PJRT_Event_Await_Args* args) {
  std::shared_ptr<PJRT_EventState> state = args->event->state;
  std::unique_lock<std::mutex> lock(state->mu);
  if (!state->ready) {
    auto done = std::make_shared<std::condition_variable>();
    state->on_ready.push_back([done](const absl::Status&) { done->notify_all(); });
    done->wait(lock, [&] { return state->ready; });
  }
  return MakeError(state->status);
}

PJRT_Error* EventOnReady(PJRT_Event_OnReady_Args* args) {
  PJRT_Event_OnReadyCallback callback = args->callback;
  void* user_arg = args->user_arg;
  // The callback owns the error it is given.
  auto run = [callback, user_arg](const absl::Status& status) {
    callback(MakeError(status), user_arg);
  };
  PJRT_EventState& state = *args->event->state;
  std::unique_lock<std::mutex> lock(state.mu);
  if (!state.ready) {
    state.on_ready.push_back(std::move(run));
    return nullptr;
  }
  absl::Status status = state.status;
  lock.unlock();
  run(status);
  return nullptr;
}

PJRT_Error* EventCreate(PJRT_Event_Create_Args* args) {
  args->event = new PJRT_Event{std::make_shared<PJRT_EventState>()};
  return nullptr;
}

PJRT_Error* EventSet(PJRT_Event_Set_Args* args) {
  PJRT_EventState& state = *args->event->state;
  std::vector<std::function<void(const absl::Status&)>> callbacks;
  absl::Status status;
  {
    std::lock_guard<std::mutex> lock(state.mu);
    if (state.ready) {
      return MakeError(absl::FailedPreconditionError("PJRT_Event_Set on an event already set"));
    }
    if (args->error_code != PJRT_Error_Code_OK) {
      status = absl::Status(static_cast<absl::StatusCode>(args->error_code),
                            absl::string_view(args->error_message, args->error_message_size));
    }
    state.ready = true;
    state.status = status;
    callbacks.swap(state.on_ready);
  }
  for (auto& callback : callbacks) callback(status);
  return nullptr;
}

// ---- element types

namespace {

struct TypePair {
  PJRT_Buffer_Type pjrt;
  PrimitiveType hloc;
};

constexpr TypePair kTypes[] = {
    {PJRT_Buffer_Type_PRED, xla::PRED},
    {PJRT_Buffer_Type_S8, xla::S8},
    {PJRT_Buffer_Type_S16, xla::S16},
    {PJRT_Buffer_Type_S32, xla::S32},
    {PJRT_Buffer_Type_S64, xla::S64},
    {PJRT_Buffer_Type_U8, xla::U8},
    {PJRT_Buffer_Type_U16, xla::U16},
    {PJRT_Buffer_Type_U32, xla::U32},
    {PJRT_Buffer_Type_U64, xla::U64},
    {PJRT_Buffer_Type_F16, xla::F16},
    {PJRT_Buffer_Type_F32, xla::F32},
    {PJRT_Buffer_Type_F64, xla::F64},
    {PJRT_Buffer_Type_BF16, xla::BF16},
    {PJRT_Buffer_Type_C64, xla::C64},
    {PJRT_Buffer_Type_C128, xla::C128},
    {PJRT_Buffer_Type_F8E5M2, xla::F8E5M2},
    {PJRT_Buffer_Type_F8E4M3FN, xla::F8E4M3FN},
    {PJRT_Buffer_Type_F8E4M3B11FNUZ, xla::F8E4M3B11FNUZ},
    {PJRT_Buffer_Type_F8E5M2FNUZ, xla::F8E5M2FNUZ},
    {PJRT_Buffer_Type_F8E4M3FNUZ, xla::F8E4M3FNUZ},
    {PJRT_Buffer_Type_S4, xla::S4},
    {PJRT_Buffer_Type_U4, xla::U4},
    {PJRT_Buffer_Type_TOKEN, xla::TOKEN},
    {PJRT_Buffer_Type_S2, xla::S2},
    {PJRT_Buffer_Type_U2, xla::U2},
    {PJRT_Buffer_Type_F8E4M3, xla::F8E4M3},
    {PJRT_Buffer_Type_F8E3M4, xla::F8E3M4},
    {PJRT_Buffer_Type_F8E8M0FNU, xla::F8E8M0FNU},
    {PJRT_Buffer_Type_F4E2M1FN, xla::F4E2M1FN},
};

}  // namespace

absl::StatusOr<PrimitiveType> FromPjrtType(PJRT_Buffer_Type type) {
  for (const TypePair& pair : kTypes) {
    if (pair.pjrt == type) return pair.hloc;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown PJRT_Buffer_Type ", static_cast<int>(type)));
}

PJRT_Buffer_Type ToPjrtType(PrimitiveType type) {
  for (const TypePair& pair : kTypes) {
    if (pair.hloc == type) return pair.pjrt;
  }
  return PJRT_Buffer_Type_INVALID;
}

}  // namespace pjrt
}  // namespace hloc
