// The threaded page only (tools/web.sh --threads; src/app/CMakeLists.txt links it there):
// libunwind's part of wasm exceptions, with the landing-pad context as the compiler uses it.
//
// Each C++ catch clause reaches the personality function through __wasm_lpad_context: the
// code clang generates in a landing pad stores the pad's index and its LSDA there, calls
// _Unwind_CallPersonality, and reads back the selector that says which clause matches.
// Emscripten 3.1.6's libunwind (system/lib/libunwind/src/Unwind-wasm.c) declares that
// context thread_local, for the LLVM it was released with; Debian pairs it with clang 14,
// whose landing pads still address it as a plain global (TLS offset 40 read as address 40).
// With -pthread the two are different memory: the personality reads an LSDA that was never
// written, no clause ever matches, and every `catch (const T&)` rethrows. The page then dies
// with an uncaught WebAssembly.Exception at the first error it meant to catch (keep_progress's
// "no progress file yet", 30 frames after start). `catch (...)` and destructors still worked:
// their pads do not ask the personality.
//
// So this file defines the same functions as that libunwind source, with the context as clang
// 14 addresses it: one plain global. The archive's object is then never pulled in (its every
// symbol is defined here). One context for all threads: two threads inside landing pads at the
// same instant can read each other's (a window of a few instructions; clang 14's design).
// A toolchain whose landing pads address a thread-local context (later LLVM) needs libunwind's
// own file: drop this one then (it should fail to link, a TLS relocation against a non-TLS
// symbol; not tried). tests/web/test_page_hub_threads.py fails in either mismatch.
// Follows Unwind-wasm.c (LLVM, Apache-2.0 WITH LLVM-exception).
#include <stdint.h>

#ifndef __wasm_exception_handling__
#error "wasm_eh_threads_web.c is for builds with -fwasm-exceptions"
#endif

// The parts of libunwind's unwind.h used here (clang's own unwind.h, first on the include
// path, declares some of these functions with other types).
typedef int _Unwind_Reason_Code;
typedef int _Unwind_Action;
enum { _URC_FOREIGN_EXCEPTION_CAUGHT = 1, _UA_CLEANUP_PHASE = 2 };
struct _Unwind_Context;
typedef struct _Unwind_Exception _Unwind_Exception;
struct _Unwind_Exception {  // its leading fields; libc++abi allocates the whole
  uint64_t exception_class;
  void (*exception_cleanup)(_Unwind_Reason_Code reason, _Unwind_Exception* exc);
};

_Unwind_Reason_Code __gxx_personality_wasm0(int version, _Unwind_Action actions, uint64_t exceptionClass,
                                            _Unwind_Exception* unwind_exception, struct _Unwind_Context* context);

struct _Unwind_LandingPadContext {
  uintptr_t lpad_index;  // in: the landing pad
  uintptr_t lsda;        // in: its function's LSDA
  uintptr_t selector;    // out: which catch clause matches (0: none)
};

struct _Unwind_LandingPadContext __wasm_lpad_context;  // not thread_local: see above

_Unwind_Reason_Code _Unwind_CallPersonality(void* exception_ptr) {
  _Unwind_Exception* e = (_Unwind_Exception*)exception_ptr;
  __wasm_lpad_context.selector = 0;
  // Wasm has no two-phase unwinding: the cleanup phase only.
  return __gxx_personality_wasm0(1, _UA_CLEANUP_PHASE, e->exception_class, e,
                                 (struct _Unwind_Context*)&__wasm_lpad_context);
}

_Unwind_Reason_Code _Unwind_RaiseException(_Unwind_Exception* e) { __builtin_wasm_throw(0, e); }

void _Unwind_DeleteException(_Unwind_Exception* e) {
  if (e->exception_cleanup) (*e->exception_cleanup)(_URC_FOREIGN_EXCEPTION_CAUGHT, e);
}

void _Unwind_SetGR(struct _Unwind_Context* context, int index, uintptr_t value) {
  if (index == 1) ((struct _Unwind_LandingPadContext*)context)->selector = value;  // the only use
}

uintptr_t _Unwind_GetIP(struct _Unwind_Context* context) {
  return ((struct _Unwind_LandingPadContext*)context)->lpad_index + 2;  // used 1-based after a -1
}

void _Unwind_SetIP(struct _Unwind_Context* context, uintptr_t value) {
  (void)context;
  (void)value;
}

uintptr_t _Unwind_GetLanguageSpecificData(struct _Unwind_Context* context) {
  return ((struct _Unwind_LandingPadContext*)context)->lsda;
}

uintptr_t _Unwind_GetRegionStart(struct _Unwind_Context* context) {
  (void)context;
  return 0;
}
