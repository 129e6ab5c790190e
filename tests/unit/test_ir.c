/* test_ir.c - IR construction, type checking, the simplifier and interval analysis. */
#include "../../ir/ir.h"
#include "test.h"

#include <stdlib.h>

/* render an expression with the dump printer */
static const char *show(const Expr *e)
{
    static char buf[4096];
    FILE *f = tmpfile();
    if (!f)
        return "(tmpfile failed)";
    ir_print_expr(f, e);
    rewind(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

static Expr *v(Var *x) { return ir_varref(x); }
static Expr *c(int64_t k) { return ir_idx(k); }
static Expr *B(BinOp op, Expr *a, Expr *b) { return ir_bin(op, a, b); }
static int is_select(const Expr *e, const void *ctx)
{
    (void)ctx;
    return e->kind == E_SELECT;
}
static int is_var_ref(const Expr *e, const void *x) { return e->kind == E_VAR && e->u.var == x; }

int main(void)
{
    Arena *a = ir_arena_new();
    ir_arena_set(a);
    Var *x = ir_var_new("x", DT_INDEX), *y = ir_var_new("y", DT_INDEX), *io = ir_var_new("io", DT_INDEX),
        *ii = ir_var_new("ii", DT_INDEX);
    RangeMap m = {0};
    ir_range_push(&m, ii, 0, 15);
    ir_range_push(&m, io, 0, 9);

    /* ir_expr_find: the node itself first, then operands left to right, a select's
     * condition before its sides */
    Expr *in_sel = ir_select(B(OP_LT, v(y), c(2)), v(x), c(1));
    Expr *out_sel = ir_select(B(OP_LT, v(x), c(3)), in_sel, c(0));
    Expr *sum = B(OP_ADD, v(y), out_sel);
    CHECK(ir_expr_find(sum, is_select, NULL) == out_sel);
    CHECK(ir_expr_find(out_sel->u.sel.t, is_select, NULL) == in_sel);
    CHECK(ir_expr_find(sum, is_var_ref, x) == out_sel->u.sel.cond->u.bin.a);
    CHECK(ir_expr_find(c(4), is_select, NULL) == NULL);

    /* expressions of run-time dims non-negative by their form: C's / and % print them */
    CHECK(ir_dim_expr_nonneg(B(OP_FLOORDIV, B(OP_ADD, v(x), c(1)), c(2))));
    CHECK(ir_dim_expr_nonneg(B(OP_FLOORMOD, ir_un(UN_NEG, B(OP_FLOORMOD, v(x), c(8))), c(8))));
    CHECK(!ir_dim_expr_nonneg(ir_un(UN_NEG, B(OP_FLOORMOD, v(x), c(8)))));
    CHECK(!ir_dim_expr_nonneg(B(OP_FLOORDIV, B(OP_SUB, v(x), c(1)), c(2))));
    CHECK(!ir_dim_expr_nonneg(B(OP_ADD, v(x), c(-1))));

    /* packed types: sizes in bytes, elements low bits first, i4 and i2 sign-extended */
    CHECK_EQ(3, ir_dtype_size(DT_I4, 5));
    CHECK_EQ(2, ir_dtype_size(DT_U2, 5));
    CHECK_EQ(20, ir_dtype_size(DT_F32, 5));
    CHECK_EQ(4, ir_dtype_bits(DT_F4E2M1));
    CHECK(ir_dtype_is_packed(DT_U4) && !ir_dtype_is_packed(DT_F8E8M0) && ir_dtype_is_storage(DT_F8E8M0));
    {
        unsigned char p4[3] = {0}, p2[2] = {0xff, 0xff};
        ir_packed_set(DT_I4, p4, 0, -3);
        ir_packed_set(DT_I4, p4, 1, 7);
        ir_packed_set(DT_I4, p4, 4, -8);
        CHECK_EQ(0x7d, p4[0]);
        CHECK_EQ(0x08, p4[2]);
        CHECK_EQ(-3, ir_packed_get(DT_I4, p4, 0));
        CHECK_EQ(13, ir_packed_get(DT_U4, p4, 0));
        CHECK_EQ(-8, ir_packed_get(DT_I4, p4, 4));
        ir_packed_set(DT_U2, p2, 5, 0);
        CHECK_EQ(0xf3, p2[1]);
        CHECK_EQ(-1, ir_packed_get(DT_I2, p2, 4));
        CHECK_EQ(0, ir_packed_get(DT_U2, p2, 5));
    }
    CHECK_EQ(-7, ir_wrap_int(9, DT_I4));
    CHECK_EQ(1, ir_wrap_int(-3, DT_I2));
    {
        unsigned char b[2] = {0};
        ir_f32_to_storage(DT_F4E2M1, -2.6f, b);
        CHECK_EQ(0xd, b[0]);                        /* -3 */
        ir_f32_to_storage(DT_F4E2M1, 100.0f, b);
        CHECK_EQ(7, b[0]);                          /* saturates at 6 */
        CHECK(ir_storage_to_f32(DT_F4E2M1, b) == 6.0f);
        ir_f32_to_storage(DT_F8E8M0, 3.0f, b);
        CHECK_EQ(129, b[0]);                        /* rounded up to 4 */
        CHECK(ir_storage_to_f32(DT_F8E8M0, b) == 4.0f);
    }

    /* constant folding */
    CHECK_STR("7", show(ir_simplify(B(OP_ADD, c(3), c(4)), NULL)));
    CHECK_STR("-2", show(ir_simplify(B(OP_FLOORDIV, c(-7), c(4)), NULL)));
    CHECK_STR("1", show(ir_simplify(B(OP_FLOORMOD, c(-7), c(4)), NULL)));
    CHECK_STR("-1", show(ir_simplify(B(OP_DIV, c(-7), c(4)), NULL)));
    CHECK_STR("5.0", show(ir_simplify(B(OP_MUL, ir_float(2.5, DT_F32), ir_float(2, DT_F32)), NULL)));
    /* canonical affine forms */
    CHECK_STR("(x * 2)", show(ir_simplify(B(OP_ADD, v(x), v(x)), NULL)));
    CHECK_STR("0", show(ir_simplify(B(OP_SUB, B(OP_ADD, v(x), v(y)), B(OP_ADD, v(y), v(x))), NULL)));
    CHECK_STR("((x * 3) + 3)", show(ir_simplify(B(OP_MUL, B(OP_ADD, v(x), c(1)), c(3)), NULL)) );
    CHECK_STR("(y - x)", show(ir_simplify(B(OP_ADD, B(OP_MUL, v(x), c(-1)), v(y)), NULL)));
    CHECK_STR("-x", show(ir_simplify(B(OP_SUB, c(0), v(x)), NULL)));
    /* div/mod after split: (io*16 + ii) / 16 = io, % 16 = ii when 0 <= ii < 16 */
    Expr *fused = B(OP_ADD, B(OP_MUL, v(io), c(16)), v(ii));
    CHECK_STR("io", show(ir_simplify(B(OP_FLOORDIV, fused, c(16)), &m)));
    CHECK_STR("ii", show(ir_simplify(B(OP_FLOORMOD, fused, c(16)), &m)));
    CHECK_STR("(io * 2)", show(ir_simplify(B(OP_FLOORDIV, B(OP_MUL, v(io), c(32)), c(16)), &m)));
    CHECK_STR("((io * 2) + (ii / 8))", show(ir_simplify(B(OP_FLOORDIV, fused, c(8)), &m)));
    CHECK_STR("(ii % 8)", show(ir_simplify(B(OP_FLOORMOD, fused, c(8)), &m)));
    CHECK_STR("((x // 4) // 2)" , show(B(OP_FLOORDIV, B(OP_FLOORDIV, v(x), c(4)), c(2))));
    CHECK_STR("(x // 8)", show(ir_simplify(B(OP_FLOORDIV, B(OP_FLOORDIV, v(x), c(4)), c(2)), NULL)));
    CHECK_STR("(x %% 4)", show(ir_simplify(B(OP_FLOORMOD, B(OP_FLOORMOD, v(x), c(8)), c(4)), NULL)));
    /* unknown sign keeps the floor forms; a known one turns into C's / and % */
    CHECK_STR("(x // 4)", show(ir_simplify(B(OP_FLOORDIV, v(x), c(4)), NULL)));
    CHECK_STR("(ii / 4)", show(ir_simplify(B(OP_FLOORDIV, v(ii), c(4)), &m)));
    /* comparisons decided by ranges: guards of divisible splits vanish */
    CHECK_STR("true", show(ir_simplify(B(OP_LT, fused, c(160)), &m)));
    CHECK_STR("((io * 16) + ii) < 150", "((io * 16) + ii) < 150");
    CHECK_STR("(((io * 16) + ii) < 150)", show(ir_simplify(B(OP_LT, fused, c(150)), &m)));
    CHECK_STR("false", show(ir_simplify(B(OP_GE, v(ii), c(16)), &m)));
    /* a bound on a quotient is a bound on the dividend: x // 4 < 3 is x < 12, and with
     * ii >= 0 known, C's / too: ii / 4 <= 2 is ii < 12, ii / 4 > 2 is ii >= 12 */
    CHECK_STR("(x < 12)", show(ir_simplify(B(OP_LT, B(OP_FLOORDIV, v(x), c(4)), c(3)), NULL)));
    CHECK_STR("(x >= 12)", show(ir_simplify(B(OP_GE, B(OP_FLOORDIV, v(x), c(4)), c(3)), NULL)));
    CHECK_STR("(ii < 12)", show(ir_simplify(B(OP_LE, B(OP_DIV, v(ii), c(4)), c(2)), &m)));
    CHECK_STR("(ii >= 12)", show(ir_simplify(B(OP_GT, B(OP_DIV, v(ii), c(4)), c(2)), &m)));
    CHECK_STR("((x / 4) < 3)", show(ir_simplify(B(OP_LT, B(OP_DIV, v(x), c(4)), c(3)), NULL)));
    CHECK_STR("ii", show(ir_simplify(B(OP_MIN, v(ii), c(20)), &m)));
    CHECK_STR("x", show(ir_simplify(B(OP_MAX, v(x), B(OP_SUB, v(x), c(1))), NULL)));
    /* division by a run-time extent (a dim W in 4..64, fused over the leaves: f in 0..159):
     * f % W is in [0, W), C's / and % where f >= 0, f / W * W + f % W is f again */
    {
        Var *W = ir_var_new("W", DT_INDEX);
        W->is_dim = 1;
        W->lo = 4;
        W->hi = 64;
        int64_t lo = 0, hi = 0;
        CHECK(ir_const_bounds(B(OP_FLOORMOD, fused, v(W)), &m, &lo, &hi) && lo == 0 && hi == 63);
        CHECK(ir_const_bounds(B(OP_FLOORDIV, fused, v(W)), &m, &lo, &hi) && lo == 0 && hi == 39);
        CHECK(!ir_const_bounds(B(OP_FLOORDIV, v(x), v(W)), &m, &lo, &hi));
        CHECK_STR("(((io * 16) + ii) % W)", show(ir_simplify(B(OP_FLOORMOD, fused, v(W)), &m)));
        CHECK_STR("(x %% W)", show(ir_simplify(B(OP_FLOORMOD, v(x), v(W)), NULL)));
        CHECK_STR("true", show(ir_simplify(B(OP_LT, B(OP_FLOORMOD, v(x), v(W)), v(W)), NULL)));
        CHECK_STR("((x %% W) < y)", show(ir_simplify(B(OP_LT, B(OP_FLOORMOD, v(x), v(W)), v(y)), NULL)));
        /* a part of a fused run-time axis, min(f / 2, W - 1), is below W; min(x, W) is not */
        CHECK_STR("true", show(ir_simplify(B(OP_LT, B(OP_MIN, B(OP_FLOORDIV, v(x), c(2)), B(OP_SUB, v(W), c(1))),
                                             v(W)), NULL)));
        CHECK_STR("(min(x, W) < W)", show(ir_simplify(B(OP_LT, B(OP_MIN, v(x), v(W)), v(W)), NULL)));
        CHECK_STR("((io * 16) + ii)", show(ir_simplify(B(OP_ADD, B(OP_MUL, B(OP_FLOORDIV, fused, v(W)), v(W)),
                                                           B(OP_FLOORMOD, fused, v(W))), &m)));
        /* a run of dims taken apart from one flat index (a reshape merging [C, H, W]), stored
         * compact: (x / W) % H * W + x % W is x % (W * H), then x / (W * H) * (W * H) adds up
         * to x; with a constant inner extent, (x / 8) % W * 8 + x % 8 is x % (W * 8) */
        Var *H = ir_var_new("H", DT_INDEX);
        H->is_dim = 1;
        H->lo = 2;
        H->hi = 32;
        Expr *WH = ir_mul(v(W), v(H));
        CHECK_STR("(x % (W * H))", show(ir_simplify(B(OP_ADD, B(OP_MUL, B(OP_MOD, B(OP_DIV, v(x), v(W)), v(H)), v(W)),
                                                      B(OP_MOD, v(x), v(W))), NULL)));
        CHECK_STR("x", show(ir_simplify(B(OP_ADD, B(OP_MUL, B(OP_DIV, v(x), WH), WH),
                                          B(OP_ADD, B(OP_MUL, B(OP_MOD, B(OP_DIV, v(x), v(W)), v(H)), v(W)),
                                            B(OP_MOD, v(x), v(W)))), NULL)));
        CHECK_STR("(x % (W * 8))", show(ir_simplify(B(OP_ADD, B(OP_MUL, B(OP_MOD, B(OP_DIV, v(x), c(8)), v(W)), c(8)),
                                                      B(OP_MOD, v(x), c(8))), NULL)));
        /* products of extents: H * W is W * H, 2 * (H * W) over H * 2 is W, H * W is not H * H */
        IrProd p1 = ir_prod_one(), p2 = ir_prod_one(), p3 = ir_prod_one(), q;
        ir_prod_mul(&p1, B(OP_MUL, v(H), v(W)));
        ir_prod_mul(&p2, v(W));
        ir_prod_mul(&p2, v(H));
        CHECK(ir_prod_equal(&p1, &p2));
        ir_prod_mul(&p1, c(2));
        ir_prod_mul(&p3, B(OP_MUL, v(H), c(2)));
        CHECK(ir_prod_div(&p1, &p3, &q) && q.coef == 1 && q.n == 1);
        CHECK_STR("W", show(ir_prod_expr(&q)));
        CHECK(!ir_prod_div(&p3, &p1, &q));
        ir_prod_mul(&p3, v(H));
        CHECK(!ir_prod_equal(&p1, &p3));
        /* indices below a product of extents: of an axis m of extent H * W, m / W is below H,
         * (m / W) % H below H; of axes h, w of extents H, W, h * W + w is below H * W */
        IterVar *ax[2] = {ir_itervar_new("m", 2048, IV_SPATIAL), NULL};
        ax[0]->dyn = WH;
        Tensor *tm = ir_compute("tm", 1, ax, c(0));
        IrProd u;
        CHECK(ir_dyn_index_below(tm, B(OP_DIV, v(ax[0]->var), v(W)), NULL, &u));
        CHECK_STR("H", show(ir_prod_expr(&u)));
        CHECK(ir_dyn_index_below(tm, B(OP_MOD, B(OP_DIV, v(ax[0]->var), v(W)), v(H)), NULL, &u));
        CHECK_STR("H", show(ir_prod_expr(&u)));
        CHECK(ir_dyn_index_below(tm, B(OP_DIV, v(ax[0]->var), v(H)), NULL, &u));
        CHECK_STR("W", show(ir_prod_expr(&u)));
        CHECK(!ir_dyn_index_below(tm, B(OP_SUB, v(ax[0]->var), c(1)), NULL, &u));
        ax[0] = ir_itervar_new("h", 32, IV_SPATIAL);
        ax[1] = ir_itervar_new("w", 64, IV_SPATIAL);
        ax[0]->dyn = v(H);
        ax[1]->dyn = v(W);
        Tensor *thw = ir_compute("thw", 2, ax, c(0));
        CHECK(ir_dyn_index_below(thw, B(OP_ADD, B(OP_MUL, v(ax[0]->var), v(W)), v(ax[1]->var)), NULL, &u));
        CHECK(ir_prod_equal(&u, &p2));
        CHECK(!ir_dyn_index_below(thw, B(OP_ADD, B(OP_MUL, v(ax[0]->var), v(H)), v(ax[1]->var)), NULL, &u));
    }
    /* expression depth: a leaf is 1 (index expressions count too) */
    CHECK_EQ(1, ir_expr_depth(v(x)));
    CHECK_EQ(3, ir_expr_depth(B(OP_MUL, B(OP_ADD, v(x), c(1)), c(3))));
    CHECK_EQ(3, ir_expr_depth(ir_select(B(OP_LT, v(x), c(0)), v(y), v(x))));
    /* logic and select */
    CHECK_STR("(x < 3)", show(ir_simplify(B(OP_AND, ir_bool(1), B(OP_LT, v(x), c(3))), NULL)));
    Expr *f1 = ir_float(1, DT_F32), *f2 = ir_float(2, DT_F32);
    CHECK_STR("2.0", show(ir_simplify(ir_select(B(OP_LT, v(ii), c(0)), f1, f2), &m)));
    /* overflow is never folded into a wrong constant */
    Expr *big = ir_int(INT64_MAX, DT_I64);
    CHECK_STR("(i64(9223372036854775807) + i64(1))", show(ir_simplify(B(OP_ADD, big, ir_int(1, DT_I64)), NULL)));
    Expr *i32max = ir_int(INT32_MAX, DT_I32);
    CHECK(ir_simplify(B(OP_ADD, i32max, c(1)), NULL)->kind == E_BIN);

    /* bounds */
    int64_t lo, hi;
    CHECK(ir_const_bounds(fused, &m, &lo, &hi));
    CHECK_EQ(0, lo);
    CHECK_EQ(159, hi);
    CHECK(!ir_const_bounds(v(x), &m, &lo, &hi));
    CHECK(ir_const_bounds(B(OP_FLOORMOD, v(x), c(7)), &m, &lo, &hi));
    CHECK_EQ(6, hi);

    /* interval of an access index over inner loops: conv input rows y*2 + ry - 1 */
    Var *oy = ir_var_new("oy", DT_INDEX), *ry = ir_var_new("ry", DT_INDEX);
    Var *inner[1] = {ry};
    int64_t ext[1] = {3};
    Expr *elo, *ehi;
    CHECK(ir_affine_interval(B(OP_SUB, B(OP_ADD, B(OP_MUL, v(oy), c(2)), v(ry)), c(1)), inner, ext, 1, NULL, &elo, &ehi));
    CHECK_STR("((oy * 2) - 1)", show(elo));
    CHECK_STR("((oy * 2) + 1)", show(ehi));
    CHECK(!ir_affine_interval(B(OP_MUL, v(oy), v(ry)), inner, ext, 1, NULL, &elo, &ehi));

    /* type checking */
    Expr *fx = ir_cast(DT_F32, v(x));
    CHECK(ir_binary(OP_ADD, fx, ir_int(1, DT_I32)) != NULL);   /* literal adapts */
    CHECK(ir_binary(OP_ADD, v(x), fx) == NULL);
    CHECK_HAS(ir_errmsg(), "type mismatch in '+': i32 and f32");
    CHECK(ir_binary(OP_ADD, v(x), ir_float(0.5, DT_F32)) == NULL);
    CHECK(ir_binary(OP_AND, v(x), v(y)) == NULL);
    CHECK_HAS(ir_errmsg(), "needs bool operands");
    Expr *args[1] = {v(x)};
    CHECK(ir_mathcall(FN_EXP, args, 1) == NULL);
    CHECK_HAS(ir_errmsg(), "exp() needs a float argument");
    CHECK(ir_mathcall(FN_POW, args, 1) == NULL);
    CHECK_HAS(ir_errmsg(), "pow() takes 2 arguments, got 1");
    CHECK(ir_binary(OP_BITAND, fx, fx) == NULL);

    /* tensors and the verifier */
    Program *p = ir_program_new("t");
    int64_t shape[2] = {4, 5};
    Tensor *A = ir_placeholder("A", DT_F32, 2, shape);
    CHECK_EQ(0, ir_program_add(p, A));
    CHECK_EQ(-1, ir_program_add(p, ir_placeholder("A", DT_F32, 2, shape)));
    CHECK_HAS(ir_errmsg(), "defined twice");
    int64_t bad[1] = {-1};
    CHECK(ir_placeholder("Z", DT_F32, 1, bad) == NULL);
    IterVar *ax[2] = {ir_itervar_new("i", 4, IV_SPATIAL), ir_itervar_new("j", 5, IV_SPATIAL)};
    Expr *idx[2] = {v(ax[0]->var), B(OP_ADD, v(ax[1]->var), c(1))};
    Tensor *Bt = ir_compute("B", 2, ax, ir_access(A, idx, 2));
    Bt->is_output = 1;
    ir_program_add(p, Bt);
    CHECK_EQ(-1, ir_program_verify(p));
    CHECK_HAS(ir_errmsg(), "index 1 of 'A' ranges over 1..5, outside 0..4");
    Expr *idx1[1] = {v(ax[0]->var)};
    IterVar *ax2[2] = {ir_itervar_new("i", 4, IV_SPATIAL), ir_itervar_new("j", 5, IV_SPATIAL)};
    Tensor *Ct = ir_compute("C", 2, ax2, ir_access(A, idx1, 1));
    Program *p2 = ir_program_new("t2");
    ir_program_add(p2, A);
    ir_program_add(p2, Ct);
    Ct->is_output = 1;
    CHECK_EQ(-1, ir_program_verify(p2));
    CHECK_HAS(ir_errmsg(), "'A' has 2 dimensions, indexed with 1");

    /* scans may read themselves only at earlier steps */
    IterVar *sx[2] = {ir_itervar_new("t", 6, IV_SPATIAL), ir_itervar_new("i", 3, IV_SPATIAL)};
    Tensor *S = ir_scan_begin("S", DT_F32, 2, sx);
    Expr *now[2] = {v(sx[0]->var), v(sx[1]->var)};
    Expr *prev[2] = {B(OP_SUB, v(sx[0]->var), c(1)), v(sx[1]->var)};
    CHECK_EQ(-1, ir_scan_finish(S, 1, ir_float(0, DT_F32), ir_access(S, now, 2)));
    CHECK_HAS(ir_errmsg(), "only at earlier time steps");
    CHECK_EQ(0, ir_scan_finish(S, 1, ir_float(0, DT_F32), ir_access(S, prev, 2)));

    ir_arena_free(a);
    return test_done("ir");
}
