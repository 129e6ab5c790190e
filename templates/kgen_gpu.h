/* kgen_gpu.h - the launch tables that kgen writes for GPU targets (CUDA, OpenCL, Metal),
 * read by the small host runtimes kgen_cuda_host.h and kgen_opencl_host.h (and, in JSON
 * form, by any Metal host). A model is a list of buffers and a list of launches over them:
 *
 *   buffers   each one an input, an output, a weight (uploaded once) or a slice of the
 *             arena (intermediates placed by liveness; several may share bytes)
 *   launches  in order, each a kernel name, its grid (blocks) and block (threads) sizes,
 *             and its arguments as indices into the buffer table
 *   controls  (run-time If and loops only) launches to skip or repeat, decided by reading
 *             a condition back: kgen_gpu_next
 *
 * Plain C99, no GPU header needed to read it.
 */
#ifndef KGEN_GPU_H
#define KGEN_GPU_H

#include <stddef.h>

#define KGEN_GPU_INPUT 0
#define KGEN_GPU_OUTPUT 1
#define KGEN_GPU_WEIGHT 2
#define KGEN_GPU_ARENA 3

typedef struct {
    int kind;                  /* KGEN_GPU_INPUT, _OUTPUT, _WEIGHT or _ARENA */
    int index;                 /* which input, output or weight */
    size_t offset;             /* _ARENA: byte offset in the arena */
    size_t bytes;
    const char *name;          /* for messages */
} kgen_gpu_buffer;

typedef struct {
    const char *name;          /* the kernel function */
    const void *func;          /* CUDA: the __global__ function; NULL elsewhere */
    unsigned grid[3];          /* blocks (work-groups, threadgroups) */
    unsigned block[3];         /* threads per block */
    int nargs;
    const int *args;           /* indices into the buffer table */
} kgen_gpu_launch;

/* Run-time control, in a model with a run-time If or loop (none elsewhere):
 *   KGEN_GPU_IF     launches [first, last] (a branch) run only when element 0 of buffer
 *                   cond is nonzero (value 1) or zero (value 0); nested Ifs give several
 *                   controls over one launch
 *   KGEN_GPU_WHILE  launches [first, last] (a loop's body; the last one sets the next
 *                   iteration's states) repeat while fewer iterations than the trip count
 *                   have run (element 0 of the int64 buffer trip, or trip_count; both -1:
 *                   no bound) and element 0 of cond is nonzero
 * A host reads such an element back once the launches before it have finished, and
 * kgen_gpu_next says which launch runs next. */
#define KGEN_GPU_IF 0
#define KGEN_GPU_WHILE 1
#define KGEN_GPU_MAX_CONTROLS 64

typedef struct {
    int kind;                  /* KGEN_GPU_IF or KGEN_GPU_WHILE */
    int first, last;           /* launches */
    int cond;                  /* buffer index */
    int cond_bytes;            /* the size of its element (1 to 8; tested for any nonzero byte) */
    int value;                 /* KGEN_GPU_IF: the branch runs when (cond != 0) == value */
    int trip;                  /* KGEN_GPU_WHILE: buffer index, or -1 */
    long long trip_count;      /* KGEN_GPU_WHILE, trip -1: the most iterations, or -1 */
} kgen_gpu_control;

typedef struct {
    const char *name;
    int nbuffers;
    const kgen_gpu_buffer *buffers;
    int nlaunches;
    const kgen_gpu_launch *launches;
    size_t arena_bytes;
    int ninputs, noutputs, nweights;
    const void *const *weights;    /* host copies of the weights, by index */
    int ncontrols;                 /* at most KGEN_GPU_MAX_CONTROLS */
    const kgen_gpu_control *controls;
} kgen_gpu_program;

/* read(ctx, buffer, dst, bytes): the first bytes of a buffer into dst, after every launch
 * before has finished; 0, or nonzero when it fails. */
typedef int (*kgen_gpu_read_fn)(void *ctx, int buffer, void *dst, size_t bytes);

/* Where a run is: set ran to -1 before the first kgen_gpu_next. */
typedef struct {
    int ran;                                   /* the launch that ran last */
    int again;                                 /* a loop that just went round (or -1) */
    long long iters[KGEN_GPU_MAX_CONTROLS];    /* KGEN_GPU_WHILE: iterations so far */
} kgen_gpu_cursor;

/* Is element 0 of buffer b (n bytes) nonzero? -1: the read failed. */
static inline int kgen_gpu_test(kgen_gpu_read_fn read, void *ctx, int b, int n)
{
    unsigned char v[8] = {0};
    int i;
    if (read(ctx, b, v, (size_t)(n > 0 && n <= 8 ? n : 1)))
        return -1;
    for (i = 0; i < 8; i++)
        if (v[i])
            return 1;
    return 0;
}

/* The launch to run after c->ran: the next one, past the branches not taken, back to a
 * loop's first launch while it goes on. p->nlaunches: the run is done; -1: a read failed. */
static inline int kgen_gpu_next(const kgen_gpu_program *p, kgen_gpu_cursor *c, kgen_gpu_read_fn read, void *ctx)
{
    int i = c->ran + 1, k;
    if (c->ran < 0)
        c->again = -1;
    for (k = 0; k < p->ncontrols && c->ran >= 0; k++)
        if (p->controls[k].kind == KGEN_GPU_WHILE && c->ran == p->controls[k].last) {
            c->iters[k]++;
            i = p->controls[k].first;
            c->again = k;
        }
    for (;;) {
        int skip = 0, pass, t;
        if (i >= p->nlaunches)
            return p->nlaunches;
        /* the loops first: a branch at a loop's first launch is inside the loop */
        for (pass = 0; pass < 2 && !skip; pass++)
            for (k = 0; k < p->ncontrols && !skip; k++) {
                const kgen_gpu_control *q = &p->controls[k];
                if (q->first != i || q->kind != (pass ? KGEN_GPU_IF : KGEN_GPU_WHILE))
                    continue;
                if ((t = kgen_gpu_test(read, ctx, q->cond, q->cond_bytes)) < 0)
                    return -1;
                if (q->kind == KGEN_GPU_WHILE) {
                    long long bound = q->trip_count;
                    if (k != c->again)
                        c->iters[k] = 0;
                    if (q->trip >= 0 && read(ctx, q->trip, &bound, sizeof bound))
                        return -1;
                    skip = !t || (bound >= 0 && c->iters[k] >= bound);
                } else {
                    skip = t != (q->value != 0);
                }
                if (skip)
                    i = q->last + 1;
            }
        c->again = -1;
        if (!skip)
            return i;
    }
}

#endif
