/* A harness that runs its work on two threads (joined before it returns): instrumented code
 * runs concurrently, so slot assignment and per-thread history are exercised. */
#include "two_threads.h"

static void *even_bytes(void *arg) {
  job *j = arg;
  for (size_t i = 0; i < j->size; i += 2) {
    if (j->data[i] > 0x80) j->out += 3;
    else if (j->data[i] == 'e') j->out += 5;
  }
  return NULL;
}

static void *odd_bytes(void *arg) {
  job *j = arg;
  for (size_t i = 1; i < j->size; i += 2) {
    if (j->data[i] < 0x20) j->out += 7;
    else if (j->data[i] == 'o') j->out += 11;
  }
  return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  job a = {data, size, 0}, b = {data, size, 0};
  run_two_jobs(even_bytes, &a, odd_bytes, &b);
  return (int)((a.out + b.out) & 0);
}
