/* kgen_gpu_dims.h - dims decided at run time for kgen's GPU hosts (models built with
 * --dim NAME=LO..HI or --input-shape x=1,3,LO..HI,W): written beside kgen_gpu.h for such
 * models only. The tables of kgen_gpu.h hold the bound (the largest extents: the device
 * buffers and the arena are allocated for it once); each run, the generated NAME_at()
 * copies them with this run's extents in (the bytes of each input and output, which are
 * compact at the actual extents, and the grid of each launch whose blocks follow a dim)
 * and the dims' values, which every kernel that reads them takes as trailing int32
 * arguments after its buffers (dim_args: which dims, in order).
 *
 * A dim computed from values (an output's count of selected elements: NonZero, Unique,
 * NonMaxSuppression...) is known only once the launch that counts it has run: the run's
 * `after` hook (generated as NAME_after) reads that count back from the device after the
 * launch, checks it, and sets the run's tables again at it (NAME_at), so that later
 * launches take it as a dim and get their grids for it, and the outputs are copied out
 * at their real extents only.
 *
 * The OpenCL and CUDA parts below run such a program through kgen_opencl_host.h or
 * kgen_cuda_host.h (include one of them first); the Metal host has its own loop.
 */
#ifndef KGEN_GPU_DIMS_H
#define KGEN_GPU_DIMS_H

#include <stdint.h>

#include "kgen_gpu.h"

/* The dims one launch's kernel takes, after its nargs buffers. */
typedef struct {
    int ndims;
    const int *dims;           /* indices into kgen_gpu_run.dims */
} kgen_gpu_dim_args;

#define KGEN_GPU_MAX_DIMS 16

/* A grid's extent from a run-time count of blocks: at least one (the kernel guards its
 * blocks where the count can reach 0). */
static inline unsigned kgen_gpu_blocks(long long n) { return n > 1 ? (unsigned)n : 1u; }

/* After launch `launch` has run: the dims it computes from values read back through read
 * (kgen_gpu_read_fn), checked, and the run's tables set again for them. KGEN_OK, or
 * KGEN_ERR_SHAPE (such a dim out of its range or not fitting another) or KGEN_ERR_DEVICE
 * (the read failed): the run stops. */
typedef int (*kgen_gpu_after_fn)(int launch, kgen_gpu_read_fn read, void *ctx);

/* One run's tables: the program at this run's extents, the dims' values. */
typedef struct {
    kgen_gpu_program program;           /* buffers and launches: copies of the bound's */
    const kgen_gpu_dim_args *args;      /* one per launch */
    int ndims;
    int32_t dims[KGEN_GPU_MAX_DIMS];    /* a dim computed from values: its bound until it is */
    kgen_gpu_after_fn after;            /* NULL: no dim computed from values */
} kgen_gpu_run;

#ifdef KGEN_OPENCL_HOST_H
/* Launch i's dims set as its trailing arguments. */
KGEN_INLINE int kgen_cl_set_dims(kgen_cl_state *st, const kgen_gpu_run *r, int i)
{
    int j;
    for (j = 0; j < r->args[i].ndims; j++) {
        cl_int v = (cl_int)r->dims[r->args[i].dims[j]];
        cl_int err = clSetKernelArg(st->kernels[i], (cl_uint)(r->program.launches[i].nargs + j), sizeof v, &v);
        if (err != CL_SUCCESS)
            return kgen_cl_fail("clSetKernelArg (a dim)", err, r->program.name);
    }
    return KGEN_OK;
}

/* kgen_cl_run's steps for a model whose run computes dims from values: inputs written,
 * launches enqueued in order, each with its dims set just before it (after r->after has
 * read back the dims the launch before computed), outputs read at the extents they have
 * then. */
KGEN_INLINE int kgen_cl_run_values(kgen_cl_state *st, const kgen_gpu_run *r, const void *const *inputs,
                                   void *const *outputs)
{
    const kgen_gpu_program *p = &r->program;
    cl_event first = NULL, last = NULL;
    cl_int err = CL_SUCCESS;
    int i, status = KGEN_OK;
    kgen_gpu_cursor cur;
    for (i = 0; i < p->nbuffers && err == CL_SUCCESS; i++)
        if (p->buffers[i].kind == KGEN_GPU_INPUT && p->buffers[i].bytes)
            err = clEnqueueWriteBuffer(st->q, st->mems[i], CL_FALSE, 0, p->buffers[i].bytes,
                                       inputs[p->buffers[i].index], 0, NULL, NULL);
    if (err != CL_SUCCESS)
        return kgen_cl_fail("clEnqueueWriteBuffer", err, p->name);
    cur.ran = -1;
    while (status == KGEN_OK && (i = kgen_gpu_next(p, &cur, kgen_cl_read, st)) < p->nlaunches) {
        const kgen_gpu_launch *l;
        size_t local[3], global[3];
        int d;
        if (i < 0) {
            status = kgen_cl_fail("clEnqueueReadBuffer (a run-time condition)", CL_INVALID_VALUE, p->name);
            break;
        }
        l = &p->launches[i];
        for (d = 0; d < 3; d++) {
            local[d] = l->block[d];
            global[d] = (size_t)l->grid[d] * l->block[d];
        }
        if ((status = kgen_cl_set_dims(st, r, i)) != KGEN_OK)
            break;
        if (first && i == p->nlaunches - 1 && last) {
            clReleaseEvent(last);   /* (the last launch again, in a loop) */
            last = NULL;
        }
        err = clEnqueueNDRangeKernel(st->q, st->kernels[i], 3, NULL, global, local, 0, NULL,
                                     !first ? &first : i == p->nlaunches - 1 ? &last : NULL);
        if (err != CL_SUCCESS) {
            status = kgen_cl_fail(l->name, err, p->name);
            break;
        }
        cur.ran = i;
        if ((status = r->after(i, kgen_cl_read, st)) == KGEN_ERR_DEVICE)
            kgen_cl_fail("clEnqueueReadBuffer (an extent computed from values)", CL_INVALID_VALUE, p->name);
    }
    for (i = 0; i < p->nbuffers && status == KGEN_OK && err == CL_SUCCESS; i++)
        if (p->buffers[i].kind == KGEN_GPU_OUTPUT && p->buffers[i].bytes)
            err = clEnqueueReadBuffer(st->q, st->mems[i], CL_FALSE, 0, p->buffers[i].bytes,
                                      outputs[p->buffers[i].index], 0, NULL, NULL);
    if (status == KGEN_OK && err != CL_SUCCESS)
        status = kgen_cl_fail("clEnqueueReadBuffer", err, p->name);
    err = clFinish(st->q);
    if (status == KGEN_OK && err != CL_SUCCESS)
        status = kgen_cl_fail("clFinish", err, p->name);
    st->last_ms = kgen_cl_events_ms(first, last);
    return status;
}

/* kgen_cl_run for run r: the device set up for the bound's program on the first run, each
 * launch's dims set as its trailing arguments, then r's program run (kgen_cl_run_values
 * where it computes dims from values). */
KGEN_INLINE int kgen_cl_run_dims(kgen_cl_state *st, const kgen_gpu_program *bound, const kgen_gpu_run *r,
                                 const char *source_path, const void *const *inputs, void *const *outputs)
{
    int i, status;
    if (!st->ready && (status = kgen_cl_init(st, bound, source_path)) != KGEN_OK) {
        kgen_cl_release(st, bound);
        return status;
    }
    if (r->after)
        return kgen_cl_run_values(st, r, inputs, outputs);
    for (i = 0; i < r->program.nlaunches; i++)
        if ((status = kgen_cl_set_dims(st, r, i)) != KGEN_OK)
            return status;
    return kgen_cl_run(st, &r->program, source_path, inputs, outputs);
}
#endif

#ifdef KGEN_CUDA_HOST_H
/* kgen_cuda_run for run r: the device set up for the bound's program on the first run,
 * then r's inputs copied in, its launches (each with its dims after its buffers; after
 * each, r->after where the run computes dims from values), its outputs copied out (at
 * the extents they have then). */
static inline int kgen_cuda_run_dims(kgen_cuda_state *st, const kgen_gpu_program *bound, const kgen_gpu_run *r,
                                     const void *const *inputs, void *const *outputs)
{
    const kgen_gpu_program *p = &r->program;
    void *args[64];
    int i, a, status;
    kgen_gpu_cursor cur;
    if (!st->ready && (status = kgen_cuda_init(st, bound)) != KGEN_OK) {
        kgen_cuda_release(st, bound);
        return status;
    }
    if ((status = kgen_cuda_copy_in(st, p, inputs)) != KGEN_OK)
        return status;
    /* kgen_cuda_launch_all's loop, each launch's dims after its buffers */
    cur.ran = -1;
    while ((i = kgen_gpu_next(p, &cur, kgen_cuda_read, st)) < p->nlaunches) {
        if (i < 0)
            return kgen_cuda_fail("reading a run-time condition back", cudaErrorUnknown, p->name);
        const kgen_gpu_launch *l = &p->launches[i];
        cur.ran = i;
        if (l->nargs + r->args[i].ndims > 64)
            return kgen_cuda_fail("too many kernel arguments", cudaErrorInvalidValue, p->name);
        for (a = 0; a < l->nargs; a++)
            args[a] = &st->mems[l->args[a]];
        for (a = 0; a < r->args[i].ndims; a++)
            args[l->nargs + a] = (void *)&r->dims[r->args[i].dims[a]];
        KGEN_CUDA_CHECK(cudaLaunchKernel(l->func, dim3(l->grid[0], l->grid[1], l->grid[2]),
                                         dim3(l->block[0], l->block[1], l->block[2]), args, 0, st->stream),
                        l->name);
        /* the dims this launch computes from values, read back: the tables again at them */
        if (r->after && (status = r->after(i, kgen_cuda_read, st)) != KGEN_OK) {
            cudaStreamSynchronize(st->stream);
            return status == KGEN_ERR_DEVICE
                       ? kgen_cuda_fail("reading an extent computed from values back", cudaErrorUnknown, p->name)
                       : status;
        }
    }
    return kgen_cuda_copy_out(st, p, outputs);
}
#endif

#endif
