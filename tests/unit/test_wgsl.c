/* test_wgsl.c - the WGSL printer (emit/wgslprint.c) on kernels built by hand: the entry
 * point and its builtins, the accessors at the places the caller gives, WGSL's operator
 * rules (parentheses between bitwise operators, a u32 shift count, select for ?:), C's
 * floor division and narrow-integer wraps, the 64-bit constants narrowed or refused, f64
 * refused, and a grid above 65535 workgroups folded into rows. What the code computes is
 * tests/webgpu.sh's (it runs on Dawn). */
#define _POSIX_C_SOURCE 200809L

#include "../../emit/wgsl.h"
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int64_t s256[1] = {256};

/* X lives in the weights at word 0, anything else in the arena at word 1024 */
static int place(void *ctx, const Buffer *b, WgslPlace *out)
{
    (void)ctx;
    *out = !strcmp(b->name, "X") ? (WgslPlace){1, 0, 1} : (WgslPlace){0, 1024, 1};
    return 0;
}

/* Y[b * 64 + t] = value over a grid of `blocks` x 64; *launches freed */
static int print(StrBuf *out, const char *name, int64_t blocks, Buffer **params, int n, Expr *value, Var **b, Var **t,
                 EmLaunch *first)
{
    Kernel *k = ir_alloc(sizeof *k);
    k->name = name;
    for (int i = 0; i < n; i++)
        ir_vec_push(&k->params, params[i], 64, "parameters");
    Buffer *Y = params[n - 1];
    Stmt *store = ir_store(Y, ir_add(ir_mul(ir_varref(*b), ir_idx(64)), ir_varref(*t)), value);
    Stmt *inner = ir_for(*t, ir_idx(0), ir_idx(64), FOR_BOUND, store);
    inner->u.loop.bind_tag = "threadIdx.x";
    Stmt *outer = ir_for(*b, ir_idx(0), ir_idx(blocks), FOR_BOUND, inner);
    outer->u.loop.bind_tag = "blockIdx.x";
    k->body = outer;
    Target tg;
    target_parse("webgpu", &tg);
    WgslModule *M = em_wgsl_new(&tg, place, NULL);
    EmLaunch *L = NULL;
    int rc = em_wgsl_kernel(M, k, name, &L);
    if (rc > 0 && first)
        *first = (EmLaunch){NULL, {L[0].grid[0], L[0].grid[1], L[0].grid[2]}, {L[0].block[0], L[0].block[1], L[0].block[2]}, 0, {NULL, NULL, NULL}};
    if (rc > 0)
        rc = em_wgsl_finish(M, out, "test") ? -1 : rc;
    em_free_launches(L, rc > 0 ? rc : 0);
    em_wgsl_free(M);
    return rc;
}

static void test_kernel(void)
{
    Buffer *X = ir_buffer_new("X", DT_F32, 1, s256, SCOPE_PARAM);
    Buffer *M = ir_buffer_new("M", DT_I32, 1, s256, SCOPE_PARAM);
    Buffer *Y = ir_buffer_new("Y", DT_F32, 1, s256, SCOPE_PARAM);
    X->is_input = M->is_input = 1;
    Var *b = ir_var_new("b", DT_I32), *t = ir_var_new("t", DT_I32);
    Expr *i = ir_add(ir_mul(ir_varref(b), ir_idx(64)), ir_varref(t));
    /* ((M[i] & 3) | 4) << 1 > floordiv(M[i], -3) ? X[i] : -X[i] */
    Expr *m = ir_load(M, i);
    Expr *bits = ir_bin(OP_SHL, ir_bin(OP_BITOR, ir_bin(OP_BITAND, m, ir_int(3, DT_I32)), ir_int(4, DT_I32)),
                        ir_int(1, DT_I32));
    Expr *cond = ir_bin(OP_GT, bits, ir_bin(OP_FLOORDIV, m, ir_int(-3, DT_I32)));
    Expr *x = ir_load(X, i);
    Expr *value = ir_select(cond, x, ir_un(UN_NEG, x));
    StrBuf o = {0};
    EmLaunch l;
    CHECK_EQ(1, print(&o, "k", 4, (Buffer *[]){X, M, Y}, 3, value, &b, &t, &l));
    const char *s = o.data ? o.data : "";
    CHECK_HAS(s, "@compute @workgroup_size(64, 1, 1)\nfn k(@builtin(workgroup_id) wid: vec3<u32>, "
                 "@builtin(local_invocation_id) lid: vec3<u32>) {");
    CHECK_HAS(s, "let b = i32(wid.x); // blockIdx.x");
    CHECK_HAS(s, "let t = i32(lid.x); // threadIdx.x");
    CHECK_HAS(s, "fn ld_X(i: i32) -> f32 { return bitcast<f32>(wts[i]); }");
    CHECK_HAS(s, "fn ld_M(i: i32) -> i32 { return bitcast<i32>(mem[1024 + i]); }");
    CHECK_HAS(s, "fn st_Y(i: i32, v: f32) { mem[1024 + i] = bitcast<u32>(v); }");
    CHECK_HAS(s, "st_Y(b * 64 + t, select(-ld_X(b * 64 + t), ld_X(b * 64 + t), "
                 "((ld_M(b * 64 + t) & 3) | 4) << 1u > kg_floordiv_i32(ld_M(b * 64 + t), -3)));");
    CHECK_HAS(s, "fn kg_erf(x: f32) -> f32");     /* the helpers come first */
    CHECK_EQ(4, l.grid[0]);
    CHECK_EQ(64, l.block[0]);
    sb_free(&o);
}

static void test_types(void)
{
    Buffer *A = ir_buffer_new("A", DT_I64, 1, s256, SCOPE_PARAM);
    Buffer *Y = ir_buffer_new("Y", DT_I8, 1, s256, SCOPE_PARAM);
    A->is_input = 1;
    Var *b = ir_var_new("b", DT_I32), *t = ir_var_new("t", DT_I32);
    Expr *i = ir_add(ir_mul(ir_varref(b), ir_idx(64)), ir_varref(t));
    /* Y = (i8)min(A[i], INT64_MAX): narrowed to i32, the extreme to INT32_MAX, the store wraps */
    Expr *v = ir_cast(DT_I8, ir_bin(OP_MIN, ir_load(A, i), ir_int(INT64_MAX, DT_I64)));
    StrBuf o = {0};
    CHECK_EQ(1, print(&o, "narrow", 4, (Buffer *[]){A, Y}, 2, v, &b, &t, NULL));
    const char *s = o.data ? o.data : "";
    CHECK_HAS(s, "// A: i64[256], narrowed to 32 bits");
    CHECK_HAS(s, "st_Y(b * 64 + t, kg_wrap_i8(min(ld_A(b * 64 + t), 2147483647)));");
    CHECK_HAS(s, "fn st_Y(i: i32, v: i32) { mem[1024 + i] = bitcast<u32>(kg_wrap_i8(v)); }");
    sb_free(&o);

    /* an i64 constant beyond 32 bits, f64: refused */
    b = ir_var_new("b", DT_I32), t = ir_var_new("t", DT_I32);
    i = ir_add(ir_mul(ir_varref(b), ir_idx(64)), ir_varref(t));
    Buffer *Z = ir_buffer_new("Z", DT_I64, 1, s256, SCOPE_PARAM);
    CHECK_EQ(-1, print(&o, "big", 4, (Buffer *[]){A, Z}, 2, ir_add(ir_load(A, i), ir_int((int64_t)1 << 40, DT_I64)), &b, &t,
                       NULL));
    CHECK_HAS(ir_errmsg(), "the i64 constant 1099511627776 does not fit in 32 bits");
    sb_free(&o);
    Buffer *D = ir_buffer_new("D", DT_F64, 1, s256, SCOPE_PARAM);
    b = ir_var_new("b", DT_I32), t = ir_var_new("t", DT_I32);
    CHECK_EQ(-1, print(&o, "dbl", 4, (Buffer *[]){D}, 1, ir_float(1.5, DT_F64), &b, &t, NULL));
    CHECK_HAS(ir_errmsg(), "webgpu has no 64-bit floats");
    sb_free(&o);
    ir_clear_error();
}

/* 70000 blocks: above 65535, dispatched as 35000 x 2 and guarded */
static void test_fold(void)
{
    int64_t big[1] = {70000 * 64};
    Buffer *Y = ir_buffer_new("Y", DT_F32, 1, big, SCOPE_PARAM);
    Var *b = ir_var_new("b", DT_I32), *t = ir_var_new("t", DT_I32);
    StrBuf o = {0};
    EmLaunch l;
    CHECK_EQ(1, print(&o, "wide", 70000, (Buffer *[]){Y}, 1, ir_float(1, DT_F32), &b, &t, &l));
    CHECK_EQ(35000, l.grid[0]);
    CHECK_EQ(2, l.grid[1]);
    CHECK_HAS(o.data ? o.data : "", "let kg_block = wid.x + wid.y * 35000u;");
    CHECK_HAS(o.data ? o.data : "", "if (kg_block < 70000u) {");
    CHECK_HAS(o.data ? o.data : "", "let b = i32(kg_block); // blockIdx.x");
    sb_free(&o);
}

int main(void)
{
    Arena *arena = ir_arena_new();
    ir_arena_set(arena);
    test_kernel();
    test_types();
    test_fold();
    ir_arena_set(NULL);
    ir_arena_free(arena);
    return test_done("wgsl");
}
