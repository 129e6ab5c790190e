/* kgen_opencl_host.h - the host side of kgen's OpenCL target: picks a device, builds the
 * generated .cl program (printing the build log when that fails), makes the buffers of a
 * launch table (kgen_gpu.h) and runs it. Header-only C99 over the OpenCL 1.2 API; link
 * with -lOpenCL.
 *
 * Device choice: $KGEN_OPENCL_DEVICE, else the first GPU, else the first device. The
 * variable is a number (the N-th device over all platforms, from 0) or a piece of the
 * "platform: device" name, e.g. KGEN_OPENCL_DEVICE=pthread or KGEN_OPENCL_DEVICE=1.
 * $KGEN_CL_BUILD_OPTIONS, when set, is passed to clBuildProgram (e.g. -cl-opt-disable).
 * The program is read from the path the generated host passes (NAME_CL_FILE, "NAME.cl"
 * unless defined when compiling); with $KGEN_CL_DIR set, from that folder instead.
 * Errors are printed on stderr with the OpenCL call and code, and returned as
 * KGEN_ERR_DEVICE.
 */
#ifndef KGEN_OPENCL_HOST_H
#define KGEN_OPENCL_HOST_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kgen_gpu.h"
#include "kgen_runtime.h"

typedef struct {
    int ready;
    cl_context ctx;
    cl_device_id dev;
    cl_command_queue q;
    cl_program prog;
    cl_kernel *kernels;        /* one per launch */
    cl_mem *mems;              /* one per buffer */
    cl_mem arena;
    double last_ms;            /* device time of the last run (profiling events) */
} kgen_cl_state;

KGEN_INLINE int kgen_cl_fail(const char *what, cl_int err, const char *name)
{
    fprintf(stderr, "%s: OpenCL: %s failed with error %d\n", name, what, (int)err);
    return KGEN_ERR_DEVICE;
}

/* The device named by $KGEN_OPENCL_DEVICE (see above). */
KGEN_INLINE int kgen_cl_pick(cl_device_id *out, const char *name)
{
    cl_platform_id plats[16];
    cl_uint np = 0;
    const char *want = getenv("KGEN_OPENCL_DEVICE");
    cl_device_id first = NULL, gpu = NULL;
    int index = 0, by_number = want && *want && strspn(want, "0123456789") == strlen(want);
    cl_uint i, j;
    cl_int err = clGetPlatformIDs(16, plats, &np);
    if (err != CL_SUCCESS || np == 0) {
        fprintf(stderr, "%s: OpenCL: no platform found (clGetPlatformIDs: %d); is an ICD installed?\n", name, (int)err);
        return KGEN_ERR_DEVICE;
    }
    for (i = 0; i < np && i < 16; i++) {
        cl_device_id devs[16];
        cl_uint nd = 0;
        char pname[256] = "", dname[256] = "", full[520];
        if (clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_ALL, 16, devs, &nd) != CL_SUCCESS)
            continue;
        clGetPlatformInfo(plats[i], CL_PLATFORM_NAME, sizeof pname, pname, NULL);
        for (j = 0; j < nd && j < 16; j++, index++) {
            cl_device_type type = 0;
            clGetDeviceInfo(devs[j], CL_DEVICE_NAME, sizeof dname, dname, NULL);
            clGetDeviceInfo(devs[j], CL_DEVICE_TYPE, sizeof type, &type, NULL);
            snprintf(full, sizeof full, "%s: %s", pname, dname);
            if (want && *want) {
                if ((by_number && atoi(want) == index) || (!by_number && strstr(full, want))) {
                    *out = devs[j];
                    return KGEN_OK;
                }
                continue;
            }
            if (!first)
                first = devs[j];
            if (!gpu && (type & CL_DEVICE_TYPE_GPU))
                gpu = devs[j];
        }
    }
    if (want && *want) {
        fprintf(stderr, "%s: OpenCL: no device matches KGEN_OPENCL_DEVICE=%s\n", name, want);
        return KGEN_ERR_DEVICE;
    }
    *out = gpu ? gpu : first;
    if (!*out) {
        fprintf(stderr, "%s: OpenCL: no device found\n", name);
        return KGEN_ERR_DEVICE;
    }
    return KGEN_OK;
}

KGEN_INLINE char *kgen_cl_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *text = NULL;
    long n;
    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (text = (char *)malloc((size_t)n + 1)) != NULL) {
        *len = fread(text, 1, (size_t)n, f);
        text[*len] = 0;
    }
    fclose(f);
    return text;
}

KGEN_INLINE void kgen_cl_release(kgen_cl_state *st, const kgen_gpu_program *p)
{
    int i;
    for (i = 0; st->kernels && i < p->nlaunches; i++)
        if (st->kernels[i])
            clReleaseKernel(st->kernels[i]);
    for (i = 0; st->mems && i < p->nbuffers; i++)
        if (st->mems[i])
            clReleaseMemObject(st->mems[i]);
    if (st->arena)
        clReleaseMemObject(st->arena);
    if (st->prog)
        clReleaseProgram(st->prog);
    if (st->q)
        clReleaseCommandQueue(st->q);
    if (st->ctx)
        clReleaseContext(st->ctx);
    free(st->kernels);
    free(st->mems);
    memset(st, 0, sizeof *st);
}

/* Device, program (built from the .cl file at source_path), buffers (weights uploaded,
 * arena slices as sub-buffers of one arena buffer), kernels with their arguments set. */
KGEN_INLINE int kgen_cl_init(kgen_cl_state *st, const kgen_gpu_program *p, const char *source_path)
{
    cl_int err;
    cl_uint align_bits = 0;
    size_t len = 0;
    char path[4096];
    char *src;
    int i, a;
    memset(st, 0, sizeof *st);
    if (kgen_cl_pick(&st->dev, p->name) != KGEN_OK)
        return KGEN_ERR_DEVICE;
    st->ctx = clCreateContext(NULL, 1, &st->dev, NULL, NULL, &err);
    if (!st->ctx)
        return kgen_cl_fail("clCreateContext", err, p->name);
    st->q = clCreateCommandQueue(st->ctx, st->dev, CL_QUEUE_PROFILING_ENABLE, &err);
    if (!st->q)
        return kgen_cl_fail("clCreateCommandQueue", err, p->name);
    if (getenv("KGEN_CL_DIR") && *getenv("KGEN_CL_DIR")) {
        const char *base = strrchr(source_path, '/');
        snprintf(path, sizeof path, "%s/%s", getenv("KGEN_CL_DIR"), base ? base + 1 : source_path);
        source_path = path;
    }
    src = kgen_cl_read_file(source_path, &len);
    if (!src) {
        fprintf(stderr, "%s: cannot read the OpenCL program %s\n", p->name, source_path);
        return KGEN_ERR_DEVICE;
    }
    st->prog = clCreateProgramWithSource(st->ctx, 1, (const char **)&src, &len, &err);
    free(src);
    if (!st->prog)
        return kgen_cl_fail("clCreateProgramWithSource", err, p->name);
    err = clBuildProgram(st->prog, 1, &st->dev, getenv("KGEN_CL_BUILD_OPTIONS") ? getenv("KGEN_CL_BUILD_OPTIONS") : "",
                         NULL, NULL);
    if (err != CL_SUCCESS) {
        size_t n = 0;
        char *log;
        clGetProgramBuildInfo(st->prog, st->dev, CL_PROGRAM_BUILD_LOG, 0, NULL, &n);
        log = (char *)malloc(n + 1);
        if (log && clGetProgramBuildInfo(st->prog, st->dev, CL_PROGRAM_BUILD_LOG, n, log, NULL) == CL_SUCCESS) {
            log[n] = 0;
            fprintf(stderr, "%s: building %s failed (error %d):\n%s\n", p->name, source_path, (int)err, log);
        }
        free(log);
        return KGEN_ERR_DEVICE;
    }
    clGetDeviceInfo(st->dev, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits, NULL);
    st->mems = (cl_mem *)calloc((size_t)p->nbuffers + 1, sizeof *st->mems);
    st->kernels = (cl_kernel *)calloc((size_t)p->nlaunches + 1, sizeof *st->kernels);
    if (!st->mems || !st->kernels)
        return kgen_cl_fail("calloc", 0, p->name);
    if (p->arena_bytes) {
        st->arena = clCreateBuffer(st->ctx, CL_MEM_READ_WRITE, p->arena_bytes, NULL, &err);
        if (!st->arena)
            return kgen_cl_fail("clCreateBuffer (arena)", err, p->name);
    }
    for (i = 0; i < p->nbuffers; i++) {
        const kgen_gpu_buffer *b = &p->buffers[i];
        size_t bytes = b->bytes ? b->bytes : 4;
        if (b->kind == KGEN_GPU_ARENA && b->bytes) {
            cl_buffer_region r;
            /* slices may share bytes on purpose (a reshape is a view): they must stay in the
             * one arena, so an offset the device cannot take is an error */
            if (align_bits && b->offset % (align_bits / 8) != 0) {
                fprintf(stderr, "%s: OpenCL: the device needs sub-buffers aligned to %u bytes, and %s is at offset %lu\n",
                        p->name, align_bits / 8, b->name, (unsigned long)b->offset);
                return KGEN_ERR_DEVICE;
            }
            r.origin = b->offset;
            r.size = b->bytes;
            st->mems[i] = clCreateSubBuffer(st->arena, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
        } else if (b->kind == KGEN_GPU_WEIGHT) {
            st->mems[i] = clCreateBuffer(st->ctx, CL_MEM_READ_ONLY | (b->bytes ? CL_MEM_COPY_HOST_PTR : 0), bytes,
                                         b->bytes ? (void *)p->weights[b->index] : NULL, &err);
        } else {
            st->mems[i] = clCreateBuffer(st->ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
        }
        if (!st->mems[i])
            return kgen_cl_fail(b->name, err, p->name);
    }
    for (i = 0; i < p->nlaunches; i++) {
        const kgen_gpu_launch *l = &p->launches[i];
        st->kernels[i] = clCreateKernel(st->prog, l->name, &err);
        if (!st->kernels[i])
            return kgen_cl_fail(l->name, err, p->name);
        for (a = 0; a < l->nargs; a++) {
            err = clSetKernelArg(st->kernels[i], (cl_uint)a, sizeof(cl_mem), &st->mems[l->args[a]]);
            if (err != CL_SUCCESS)
                return kgen_cl_fail("clSetKernelArg", err, p->name);
        }
    }
    st->ready = 1;
    return KGEN_OK;
}

/* kgen_gpu_read_fn: a blocking read (the queue is in order: it waits for the launches) */
KGEN_INLINE int kgen_cl_read(void *ctx, int buffer, void *dst, size_t bytes)
{
    kgen_cl_state *st = (kgen_cl_state *)ctx;
    return clEnqueueReadBuffer(st->q, st->mems[buffer], CL_TRUE, 0, bytes, dst, 0, NULL, NULL) != CL_SUCCESS;
}

/* The device time from the start of launch `first` to the end of `last` (first alone when
 * last is NULL), in ms; releases both events. 0 without events. */
KGEN_INLINE double kgen_cl_events_ms(cl_event first, cl_event last)
{
    cl_ulong t0 = 0, t1 = 0;
    if (!first)
        return 0;
    clGetEventProfilingInfo(first, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL);
    clGetEventProfilingInfo(last ? last : first, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL);
    clReleaseEvent(first);
    if (last)
        clReleaseEvent(last);
    return t1 > t0 ? (double)(t1 - t0) * 1e-6 : 0;
}

/* One run on host arrays: inputs written, launches enqueued in order (a run-time If or
 * loop reads its condition back: kgen_gpu_next), outputs read. */
KGEN_INLINE int kgen_cl_run(kgen_cl_state *st, const kgen_gpu_program *p, const char *source_path,
                            const void *const *inputs, void *const *outputs)
{
    cl_event first = NULL, last = NULL;
    cl_int err;
    int i, status;
    kgen_gpu_cursor cur;
    if (!st->ready && (status = kgen_cl_init(st, p, source_path)) != KGEN_OK) {
        kgen_cl_release(st, p);
        return status;
    }
    for (i = 0; i < p->nbuffers; i++) {
        const kgen_gpu_buffer *b = &p->buffers[i];
        if (b->kind == KGEN_GPU_INPUT && b->bytes) {
            err = clEnqueueWriteBuffer(st->q, st->mems[i], CL_FALSE, 0, b->bytes, inputs[b->index], 0, NULL, NULL);
            if (err != CL_SUCCESS)
                return kgen_cl_fail("clEnqueueWriteBuffer", err, p->name);
        }
    }
    cur.ran = -1;
    while ((i = kgen_gpu_next(p, &cur, kgen_cl_read, st)) < p->nlaunches) {
        const kgen_gpu_launch *l;
        size_t local[3], global[3];
        int d;
        if (i < 0)
            return kgen_cl_fail("clEnqueueReadBuffer (a run-time condition)", CL_INVALID_VALUE, p->name);
        l = &p->launches[i];
        for (d = 0; d < 3; d++) {
            local[d] = l->block[d];
            global[d] = (size_t)l->grid[d] * l->block[d];
        }
        if (first && i == p->nlaunches - 1 && last)
            clReleaseEvent(last);   /* (the last launch again, in a loop) */
        err = clEnqueueNDRangeKernel(st->q, st->kernels[i], 3, NULL, global, local, 0, NULL,
                                     !first ? &first : i == p->nlaunches - 1 ? &last : NULL);
        if (err != CL_SUCCESS)
            return kgen_cl_fail(l->name, err, p->name);
        cur.ran = i;
    }
    for (i = 0; i < p->nbuffers; i++) {
        const kgen_gpu_buffer *b = &p->buffers[i];
        if (b->kind == KGEN_GPU_OUTPUT && b->bytes) {
            err = clEnqueueReadBuffer(st->q, st->mems[i], CL_FALSE, 0, b->bytes, outputs[b->index], 0, NULL, NULL);
            if (err != CL_SUCCESS)
                return kgen_cl_fail("clEnqueueReadBuffer", err, p->name);
        }
    }
    err = clFinish(st->q);
    if (err != CL_SUCCESS)
        return kgen_cl_fail("clFinish", err, p->name);
    st->last_ms = kgen_cl_events_ms(first, last);
    return KGEN_OK;
}

#endif
