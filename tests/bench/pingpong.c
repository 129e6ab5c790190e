/* pingpong.c - the time a cache line takes to go from one core to another and back: two
 * threads hand a flag to each other through an atomic, N times. tests/bench/zoo.sh prints
 * it beside its 2-thread column, pinned to the two cores it times with (taskset): on a VM
 * whose two virtual CPUs the host places now on nearby, now on far-apart cores, that
 * column moves with it (a U-Net on 2 threads: 4.2 ms at 80-150 ns, 8.8 ms, slower than
 * one thread, at 400-450 ns).
 *
 *     cc -O2 -pthread tests/bench/pingpong.c -o pingpong && taskset -c 0,1 ./pingpong
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

enum { ROUNDS = 200000 };
static atomic_int turn;   /* 1: the other thread's turn, 0: main's */

static void *other(void *arg)
{
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        while (atomic_load_explicit(&turn, memory_order_acquire) != 1)
            ;
        atomic_store_explicit(&turn, 0, memory_order_release);
    }
    return NULL;
}

int main(void)
{
    pthread_t t;
    struct timespec a, b;
    if (pthread_create(&t, NULL, other, NULL))
        return 1;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < ROUNDS; i++) {
        atomic_store_explicit(&turn, 1, memory_order_release);
        while (atomic_load_explicit(&turn, memory_order_acquire) != 0)
            ;
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    pthread_join(t, NULL);
    printf("round_trip_ns=%.0f\n", ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / ROUNDS);
    return 0;
}
