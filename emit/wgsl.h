/* wgsl.h - private to emit/: the WGSL printer (wgslprint.c) and the WebGPU target's files
 * around it (webgpu.c).
 *
 * Memory model. A WebGPU module of kgen's sees two storage buffers: binding 0, `mem`, the
 * arena (read_write), and binding 1, `wts`, the weights (read); both are arrays of 32-bit
 * words. Every element of every buffer is one word, whatever its dtype: f32 as its bits,
 * i32 / u32 as themselves, i8 / i16 / i64 (narrowed) / i4 / i2 sign-extended as i32, u8 /
 * u16 / u64 (narrowed) / u4 / u2 / bool zero-extended, f16, bf16, the float8 types,
 * f4e2m1 and f8e8m0 as their codes in the low bits (computed in f32). f64: refused.
 * So no two invocations ever share a word (no sub-word stores, no atomics), and the host
 * converts at the boundary. Where a buffer's element 0 lies and how far apart its
 * elements are is a WgslPlace that the caller decides (webgpu.c: from the arena plan).
 * The printed code reads a buffer through ld_NAME(i) and writes it through st_NAME(i, v),
 * small functions at the top of the module that hold the place and the conversion.
 */
#ifndef KGEN_WGSL_H
#define KGEN_WGSL_H

#include "emit.h"

typedef struct {
    int binding;           /* 0: mem (the arena), 1: wts (the weights) */
    int64_t word;          /* the word of element 0 */
    int64_t stride;        /* words from one element to the next (1, or the element's bytes
                              in the arena's region for the types that are not 4 bytes) */
} WgslPlace;

/* Where buffer b lives: 0 and *out, or -1 with ir_fail(). */
typedef int (*WgslPlaceFn)(void *ctx, const Buffer *b, WgslPlace *out);

typedef struct WgslModule WgslModule;

/* A module for target t (its -max-threads and -max-shared) over the places of place(). */
WgslModule *em_wgsl_new(const Target *t, WgslPlaceFn place, void *ctx);
/* Print kernel k as one compute entry point per launch (the gpu-launch plan), named from
 * fname; *launches gets their names and grids (free with em_free_launches). The number of
 * launches, or -1 with ir_fail() for what WGSL or the target cannot do (f64, an i64 or u64
 * constant beyond 32 bits, a grid beyond 65535 workgroups in y or z, the launch limits). */
int em_wgsl_kernel(WgslModule *m, const Kernel *k, const char *fname, EmLaunch **launches);
/* The whole module: banner, bindings, the helpers, the buffers' accessors, the entry
 * points. 0, or -1 with ir_fail(). */
int em_wgsl_finish(WgslModule *m, StrBuf *out, const char *source);
void em_wgsl_free(WgslModule *m);

/* Is dtype t one the WebGPU target stores (f64: no)? */
int em_wgsl_dtype_ok(DType t);
/* The error for a dtype it does not store: ir_fail() naming `what`, so -1. */
int em_wgsl_dtype_fail(const char *what, DType t);

#endif
