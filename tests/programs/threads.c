/* threads: the harness runs work() on two threads (joined before it returns) and once itself.
 * Each thread has its own history and call stack: a thread's first block has no previous block,
 * and its context starts at the thread's start routine. */
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

volatile int sink;

__attribute__((noinline)) void work(int n) {
  for (int i = 0; i < n; i++) sink += i;
}
__attribute__((noinline)) void *start(void *arg) {
  work((int)(intptr_t)arg);
  return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  (void)data;
  pthread_t t[2];
  for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, start, (void *)(intptr_t)(size + 2));
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
  work((int)size + 2);
  return 0;
}
