/* kgen_cuda_host.h - the host side of kgen's CUDA target: allocates the buffers of a
 * launch table (kgen_gpu.h) on the current device (weights uploaded once, the arena in one
 * allocation), launches the kernels in order with cudaLaunchKernel on one stream, and
 * times them with events. Header-only, for the generated .cu file (nvcc).
 *
 * Device choice: $KGEN_CUDA_DEVICE (a number), else device 0. Errors are printed on
 * stderr with the call and cudaGetErrorString, and returned as KGEN_ERR_DEVICE.
 */
#ifndef KGEN_CUDA_HOST_H
#define KGEN_CUDA_HOST_H

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kgen_gpu.h"
#include "kgen_runtime.h"

typedef struct {
    int ready;
    void **mems;               /* one device pointer per buffer */
    unsigned char *arena;
    cudaStream_t stream;
    cudaEvent_t start, stop;
    double last_ms;            /* device time of the last run */
} kgen_cuda_state;

static inline int kgen_cuda_fail(const char *what, cudaError_t err, const char *name)
{
    fprintf(stderr, "%s: CUDA: %s failed: %s (%d)\n", name, what, cudaGetErrorString(err), (int)err);
    return KGEN_ERR_DEVICE;
}

#define KGEN_CUDA_CHECK(call, what)                                    \
    do {                                                              \
        cudaError_t kgen_err_ = (call);                               \
        if (kgen_err_ != cudaSuccess)                                 \
            return kgen_cuda_fail(what, kgen_err_, p->name);          \
    } while (0)

static inline void kgen_cuda_release(kgen_cuda_state *st, const kgen_gpu_program *p)
{
    int i;
    for (i = 0; st->mems && i < p->nbuffers; i++)
        if (p->buffers[i].kind != KGEN_GPU_ARENA && st->mems[i])
            cudaFree(st->mems[i]);
    if (st->arena)
        cudaFree(st->arena);
    if (st->ready) {
        cudaEventDestroy(st->start);
        cudaEventDestroy(st->stop);
        cudaStreamDestroy(st->stream);
    }
    free(st->mems);
    memset(st, 0, sizeof *st);
}

static inline int kgen_cuda_init(kgen_cuda_state *st, const kgen_gpu_program *p)
{
    const char *dev = getenv("KGEN_CUDA_DEVICE");
    int i;
    memset(st, 0, sizeof *st);
    KGEN_CUDA_CHECK(cudaSetDevice(dev && *dev ? atoi(dev) : 0), "cudaSetDevice");
    st->mems = (void **)calloc((size_t)p->nbuffers + 1, sizeof *st->mems);
    if (!st->mems)
        return kgen_cuda_fail("calloc", cudaErrorMemoryAllocation, p->name);
    if (p->arena_bytes)
        KGEN_CUDA_CHECK(cudaMalloc((void **)&st->arena, p->arena_bytes), "cudaMalloc (arena)");
    for (i = 0; i < p->nbuffers; i++) {
        const kgen_gpu_buffer *b = &p->buffers[i];
        if (b->kind == KGEN_GPU_ARENA) {
            st->mems[i] = st->arena + b->offset;
            continue;
        }
        KGEN_CUDA_CHECK(cudaMalloc(&st->mems[i], b->bytes ? b->bytes : 4), b->name);
        if (b->kind == KGEN_GPU_WEIGHT && b->bytes)
            KGEN_CUDA_CHECK(cudaMemcpy(st->mems[i], p->weights[b->index], b->bytes, cudaMemcpyHostToDevice), b->name);
    }
    KGEN_CUDA_CHECK(cudaStreamCreate(&st->stream), "cudaStreamCreate");
    KGEN_CUDA_CHECK(cudaEventCreate(&st->start), "cudaEventCreate");
    KGEN_CUDA_CHECK(cudaEventCreate(&st->stop), "cudaEventCreate");
    st->ready = 1;
    return KGEN_OK;
}

/* kgen_gpu_read_fn: a copy to the host on the stream, waited for */
static inline int kgen_cuda_read(void *ctx, int buffer, void *dst, size_t bytes)
{
    kgen_cuda_state *st = (kgen_cuda_state *)ctx;
    return cudaMemcpyAsync(dst, st->mems[buffer], bytes, cudaMemcpyDeviceToHost, st->stream) != cudaSuccess ||
           cudaStreamSynchronize(st->stream) != cudaSuccess;
}

/* The launches alone, on device buffers that are already in place (a run-time If or loop
 * reads its condition back: kgen_gpu_next). */
static inline int kgen_cuda_launch_all(kgen_cuda_state *st, const kgen_gpu_program *p)
{
    void *args[64];
    int i, a;
    kgen_gpu_cursor cur;
    cur.ran = -1;
    while ((i = kgen_gpu_next(p, &cur, kgen_cuda_read, st)) < p->nlaunches) {
        if (i < 0)
            return kgen_cuda_fail("reading a run-time condition back", cudaErrorUnknown, p->name);
        const kgen_gpu_launch *l = &p->launches[i];
        cur.ran = i;
        if (l->nargs > 64)
            return kgen_cuda_fail("too many kernel arguments", cudaErrorInvalidValue, p->name);
        for (a = 0; a < l->nargs; a++)
            args[a] = &st->mems[l->args[a]];
        KGEN_CUDA_CHECK(cudaLaunchKernel(l->func, dim3(l->grid[0], l->grid[1], l->grid[2]),
                                         dim3(l->block[0], l->block[1], l->block[2]), args, 0, st->stream),
                        l->name);
    }
    return KGEN_OK;
}

/* A run's first step: the inputs copied in (p's bytes), the start event recorded. */
static inline int kgen_cuda_copy_in(kgen_cuda_state *st, const kgen_gpu_program *p, const void *const *inputs)
{
    int i;
    for (i = 0; i < p->nbuffers; i++) {
        const kgen_gpu_buffer *b = &p->buffers[i];
        if (b->kind == KGEN_GPU_INPUT && b->bytes)
            KGEN_CUDA_CHECK(cudaMemcpyAsync(st->mems[i], inputs[b->index], b->bytes, cudaMemcpyHostToDevice, st->stream),
                            b->name);
    }
    KGEN_CUDA_CHECK(cudaEventRecord(st->start, st->stream), "cudaEventRecord");
    return KGEN_OK;
}

/* A run's last step: the stop event, the outputs copied out, the device time kept. */
static inline int kgen_cuda_copy_out(kgen_cuda_state *st, const kgen_gpu_program *p, void *const *outputs)
{
    int i;
    float ms = 0;
    KGEN_CUDA_CHECK(cudaEventRecord(st->stop, st->stream), "cudaEventRecord");
    for (i = 0; i < p->nbuffers; i++) {
        const kgen_gpu_buffer *b = &p->buffers[i];
        if (b->kind == KGEN_GPU_OUTPUT && b->bytes)
            KGEN_CUDA_CHECK(cudaMemcpyAsync(outputs[b->index], st->mems[i], b->bytes, cudaMemcpyDeviceToHost, st->stream),
                            b->name);
    }
    KGEN_CUDA_CHECK(cudaStreamSynchronize(st->stream), "running the kernels");
    KGEN_CUDA_CHECK(cudaEventElapsedTime(&ms, st->start, st->stop), "cudaEventElapsedTime");
    st->last_ms = ms;
    return KGEN_OK;
}

/* One run on host arrays: inputs copied in, launches, outputs copied out. */
static inline int kgen_cuda_run(kgen_cuda_state *st, const kgen_gpu_program *p, const void *const *inputs,
                                void *const *outputs)
{
    int status;
    if (!st->ready && (status = kgen_cuda_init(st, p)) != KGEN_OK) {
        kgen_cuda_release(st, p);
        return status;
    }
    if ((status = kgen_cuda_copy_in(st, p, inputs)) != KGEN_OK || (status = kgen_cuda_launch_all(st, p)) != KGEN_OK)
        return status;
    return kgen_cuda_copy_out(st, p, outputs);
}

#endif
