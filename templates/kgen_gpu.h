/* kgen_gpu.h - the launch tables that kgen writes for GPU targets (CUDA, OpenCL, Metal),
 * read by the small host runtimes kgen_cuda_host.h and kgen_opencl_host.h (and, in JSON
 * form, by any Metal host). A model is a list of buffers and a list of launches over them:
 *
 *   buffers   each one an input, an output, a weight (uploaded once) or a slice of the
 *             arena (intermediates placed by liveness; several may share bytes)
 *   launches  in order, each a kernel name, its grid (blocks) and block (threads) sizes,
 *             and its arguments as indices into the buffer table
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

typedef struct {
    const char *name;
    int nbuffers;
    const kgen_gpu_buffer *buffers;
    int nlaunches;
    const kgen_gpu_launch *launches;
    size_t arena_bytes;
    int ninputs, noutputs, nweights;
    const void *const *weights;    /* host copies of the weights, by index */
} kgen_gpu_program;

#endif
