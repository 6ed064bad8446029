/* branches: a harness whose clang branch coverage is counted by hand (tests/test_llvmcov.py).
 * llvm-cov counts two branches per condition (taken, not taken) and two per switch label:
 *   LLVMFuzzerTestOneInput: !initialized 2, size == 0 2, 'a' 2, 'b' && size > 1 4,
 *                           size > 1 && data[1] == '!' 4                           = 14
 *   stop():                 cases S A H E K and default, 2 each                    = 12
 * 26 in all. LLVMFuzzerInitialize sets initialized, so a replay that runs it covers only the
 * "false" side of !initialized. An input "X!" calls stop('X'): 'S' segfaults, 'A' aborts, 'H'
 * hangs, 'E' exits(3), 'K' kills itself with SIGKILL (no profile can be written), any other
 * byte returns. Fuzzing builds define FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION: without it the
 * build fails. */
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#ifndef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#error "a fuzzing build defines FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION"
#endif

volatile int sink;
volatile int *volatile nowhere;
static int initialized;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  initialized = 1;
  return 0;
}

static void stop(uint8_t how) {
  switch (how) {
    case 'S': *nowhere = 1; break;
    case 'A': abort();
    case 'H': for (;;) sink++;
    case 'E': exit(3);
    case 'K': raise(SIGKILL); break;
    default: break;
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!initialized) return 0;
  if (size == 0) return 0;
  if (data[0] == 'a') sink += 1;
  if (data[0] == 'b' && size > 1) sink += 2;
  if (size > 1 && data[1] == '!') stop(data[0]);
  return 0;
}
