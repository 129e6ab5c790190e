/* gpu.h - private to emit/: the buffer, launch and control tables of a GPU program, built
 * once (gpu.c) for every GPU host: the C-family ones in gpu.c (CUDA, OpenCL, Metal) and
 * WebGPU's JavaScript host (webgpu.c). See templates/kgen_gpu.h for what they mean.
 */
#ifndef KGEN_EMIT_GPU_H
#define KGEN_EMIT_GPU_H

#include "emit.h"

/* One entry of the buffer table. */
typedef struct {
    const Buffer *b;           /* NULL: the workspace of a single kernel */
    int kind;                  /* GPU_INPUT ... (KGEN_GPU_*) */
    int index;
    int64_t offset, bytes;     /* bytes: the bound's where dbytes is set */
    const char *name;
    Expr *dbytes;              /* an input's or output's bytes at run time (an index Expr of
                                  dims: compact at the actual extents), or NULL */
} GBuf;

enum { GPU_INPUT, GPU_OUTPUT, GPU_WEIGHT, GPU_ARENA };

/* A run-time If's branch or loop over launches [first, last] (kgen_gpu.h). */
#define GPU_MAX_CONTROLS 64   /* KGEN_GPU_MAX_CONTROLS */
typedef struct {
    int loop;                  /* KGEN_GPU_WHILE, else KGEN_GPU_IF */
    int first, last, cond, cond_bytes, value, trip;
    int64_t trip_count;
} GControl;

/* One launch: which kernel it belongs to and the printer's launch data. */
typedef struct {
    const Kernel *k;
    EmLaunch l;
} GLaunch;

typedef struct GpuApi GpuApi;   /* gpu.c: what the C-family APIs' files differ in */
typedef struct GProg GProg;

/* Print kernel k's device code into g->device: the number of launches (*launches, malloc'd,
 * their names taken over by the tables), or -1 with ir_fail(). */
typedef int (*GpuPrintFn)(GProg *g, const Kernel *k, EmLaunch **launches);

struct GProg {
    const char *name;          /* C prefix of the symbols */
    const char *file;          /* base name of the files */
    const char *source;
    const Target *t;
    const Dialect *d;          /* the C-family dialect, or NULL (WebGPU) */
    const GpuApi *api;         /* the C-family API, or NULL (WebGPU) */
    GpuPrintFn print;          /* NULL: the C-family printer with d */
    void *print_ctx;           /* the print function's own data */
    GBuf *bufs;
    int nbufs, capbufs;
    GLaunch *launches;
    int nlaunches, caplaunches;
    int64_t arena_bytes;
    int ninputs, noutputs, nweights;
    StrBuf device;             /* the device source */
    GControl controls[GPU_MAX_CONTROLS];   /* run-time If and loops (kgen_gpu_control) */
    int ncontrols;
    const Program *dims;       /* a model with dims decided at run time (its program), or NULL */
    const Model *mod;          /* the model (em_gpu_tables_model), or NULL for one kernel */
};

/* The tables of model m: its buffers (inputs, outputs, weights, arena slices, in that
 * order), its kernels printed in order through g->print, and with controls its run-time
 * Ifs and loops. g is set up by the caller (name, t, print). 0, or -1 with ir_fail(). */
int em_gpu_tables_model(GProg *g, const EmModel *m, int controls);
/* The tables of one kernel k: its parameters, then the workspace (a NULL buffer), and dk
 * (k under its device name) printed. 0, or -1. */
int em_gpu_tables_kernel(GProg *g, const Kernel *k, const Kernel *dk);
/* The index of buffer b in the table (NULL: the workspace), or -1. */
int em_gpu_buf_index(const GProg *g, const Buffer *b);
void em_gpu_prog_free(GProg *g);

#endif
