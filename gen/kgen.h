/* kgen.h - the public C API of libkgen: everything the .kg language can say, from C.
 *
 *   #include "kgen.h"          (with -I pointing at the kgen checkout)
 *   cc my_generator.c libkgen.a -lm
 *
 * The pieces, in the order a program uses them:
 *   ir/ir.h               arenas, dtypes, expressions, placeholders, computes, scans,
 *                         programs, the loop IR and the simplifier
 *   schedule/schedule.h   stages and the primitives (split, tile, fuse, reorder, unroll,
 *                         vectorize, parallel, bind, compute_at, compute_inline,
 *                         cache_read, cache_write, storage_align)
 *   lower/lower.h         ir_lower() and ir_lower_model(): loop IR, through named passes
 *   emit/emit.h           printing kernels as C and writing the output files
 *   gen/gen.h             the .kg frontend and the driver (gen_compile)
 *
 * Every object lives in the current arena (ir_arena_new / ir_arena_set) and goes when
 * the arena is freed. Functions that can fail on user input return -1 or NULL and leave
 * the message in ir_errmsg(). See examples/api/matmul_api.c for a complete program.
 */
#ifndef KGEN_H
#define KGEN_H

#include "../ir/ir.h"
#include "../schedule/schedule.h"
#include "../lower/lower.h"
#include "../emit/emit.h"
#include "gen.h"

#endif
