/* matmul_api.c - builds, schedules and emits a matmul through libkgen's C API: the same
 * program as examples/matmul.kg without the packing step.
 *
 *   make && cc -std=c11 -I. examples/api/matmul_api.c libkgen.a -lm -o matmul_api
 *   ./matmul_api out/matmul_api        # writes matmul_api.c, .h and kgen_runtime.h
 */
#include "gen/kgen.h"

#include <stdio.h>

static int fail(const char *what)
{
    fprintf(stderr, "matmul_api: %s: %s\n", what, ir_errmsg());
    return 1;
}

int main(int argc, char **argv)
{
    const int64_t M = 256, N = 256, K = 256;
    Arena *arena = ir_arena_new();
    ir_arena_set(arena);

    /* C[i, j] = sum(k < K: A[i, k] * B[k, j]) */
    Program *p = ir_program_new("matmul_api");
    int64_t sa[2] = {M, K}, sb[2] = {K, N};
    Tensor *A = ir_placeholder("A", DT_F32, 2, sa), *B = ir_placeholder("B", DT_F32, 2, sb);
    IterVar *i = ir_itervar_new("i", M, IV_SPATIAL), *j = ir_itervar_new("j", N, IV_SPATIAL);
    IterVar *k = ir_itervar_new("k", K, IV_REDUCE);
    Expr *ai[2] = {ir_varref(i->var), ir_varref(k->var)}, *bi[2] = {ir_varref(k->var), ir_varref(j->var)};
    Expr *prod = ir_binary(OP_MUL, ir_access(A, ai, 2), ir_access(B, bi, 2));
    IterVar *axes[2] = {i, j};
    Tensor *C = ir_compute("C", 2, axes, ir_reduce(RED_SUM, prod, &k, 1));
    C->is_output = 1;
    if (ir_program_add(p, A) || ir_program_add(p, B) || ir_program_add(p, C) || ir_program_verify(p))
        return fail("program");

    /* an 8 x 32 register tile accumulated in a local array */
    Schedule *s = sch_create(p);
    Stage *sc = sch_stage(s, C);
    Stage *cc = sch_cache_write(s, sc, SCOPE_LOCAL);
    IterVar *io, *jo, *ii, *ji;
    if (!cc || sch_tile(sc, i, j, 8, 32, &io, &jo, &ii, &ji) || sch_compute_at(s, cc, sc, jo))
        return fail("schedule");
    IterVar *order[3] = {sch_find_axis(cc, "k"), sch_find_axis(cc, "i"), sch_find_axis(cc, "j")};
    if (sch_reorder(cc, order, 3) || sch_unroll(cc, order[1]) || sch_vectorize(cc, order[2]) ||
        sch_vectorize(sc, ji))
        return fail("schedule");

    Kernel *kern = ir_lower(s, "matmul_api");
    if (!kern)
        return fail("lower");
    OutSet out = {0};
    if (em_c_kernel_files(&out, kern, "matmul_api", "examples/api/matmul_api.c") ||
        em_outset_write(&out, argc > 1 ? argv[1] : "out/matmul_api"))
        return fail("emit");
    em_outset_free(&out);
    ir_arena_free(arena);
    return 0;
}
