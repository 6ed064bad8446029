/* A harness that runs its work on two threads (joined before it returns): instrumented code
 * runs concurrently, so slot assignment and per-thread history are exercised. */
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
  const uint8_t *data;
  size_t size;
  unsigned out;
} job;

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
  pthread_t ta, tb;
  if (pthread_create(&ta, NULL, even_bytes, &a) != 0) return 0;
  if (pthread_create(&tb, NULL, odd_bytes, &b) != 0) {
    pthread_join(ta, NULL);
    return 0;
  }
  pthread_join(ta, NULL);
  pthread_join(tb, NULL);
  return (int)((a.out + b.out) & 0);
}
