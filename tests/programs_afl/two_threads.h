/* Two jobs on two threads (threads.c, and faults.c's FAULT_THREADS): a job is a part of the input
 * and what its thread makes of it; run_two_jobs starts run_a on a and run_b on b, each on its own
 * thread, and joins both before it returns (b is not started when a's thread could not be). */
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
  const uint8_t *data;
  size_t size;
  unsigned out;
} job;

static void run_two_jobs(void *(*run_a)(void *), job *a, void *(*run_b)(void *), job *b) {
  pthread_t ta, tb;
  if (pthread_create(&ta, NULL, run_a, a) != 0) return;
  if (pthread_create(&tb, NULL, run_b, b) == 0) pthread_join(tb, NULL);
  pthread_join(ta, NULL);
}
