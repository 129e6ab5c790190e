/* kgen_gpu_dims.h - dims decided at run time for kgen's GPU hosts (models built with
 * --dim NAME=LO..HI or --input-shape x=1,3,LO..HI,W): written beside kgen_gpu.h for such
 * models only. The tables of kgen_gpu.h hold the bound (the largest extents: the device
 * buffers and the arena are allocated for it once); each run, the generated NAME_at()
 * copies them with this run's extents in (the bytes of each input and output, which are
 * compact at the actual extents, and the grid of each launch whose blocks follow a dim)
 * and the dims' values, which every kernel that reads them takes as trailing int32
 * arguments after its buffers (dim_args: which dims, in order).
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

/* One run's tables: the program at this run's extents, the dims' values. */
typedef struct {
    kgen_gpu_program program;           /* buffers and launches: copies of the bound's */
    const kgen_gpu_dim_args *args;      /* one per launch */
    int ndims;
    int32_t dims[KGEN_GPU_MAX_DIMS];
} kgen_gpu_run;

#ifdef KGEN_OPENCL_HOST_H
/* kgen_cl_run for run r: the device set up for the bound's program on the first run, each
 * launch's dims set as its trailing arguments, then r's program run. */
KGEN_INLINE int kgen_cl_run_dims(kgen_cl_state *st, const kgen_gpu_program *bound, const kgen_gpu_run *r,
                                 const char *source_path, const void *const *inputs, void *const *outputs)
{
    int i, j, status;
    if (!st->ready && (status = kgen_cl_init(st, bound, source_path)) != KGEN_OK) {
        kgen_cl_release(st, bound);
        return status;
    }
    for (i = 0; i < r->program.nlaunches; i++)
        for (j = 0; j < r->args[i].ndims; j++) {
            cl_int v = (cl_int)r->dims[r->args[i].dims[j]];
            cl_int err = clSetKernelArg(st->kernels[i], (cl_uint)(r->program.launches[i].nargs + j), sizeof v, &v);
            if (err != CL_SUCCESS)
                return kgen_cl_fail("clSetKernelArg (a dim)", err, bound->name);
        }
    return kgen_cl_run(st, &r->program, source_path, inputs, outputs);
}
#endif

#ifdef KGEN_CUDA_HOST_H
/* kgen_cuda_run for run r: the device set up for the bound's program on the first run,
 * then r's inputs copied in, its launches (each with its dims after its buffers), its
 * outputs copied out. */
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
    }
    return kgen_cuda_copy_out(st, p, outputs);
}
#endif

#endif
