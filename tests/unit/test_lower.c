/* test_lower.c - the lowering's named passes (lower/): the loop and model pass lists in
 * order, and what --dump=NAME prints after each (ir_pass_dump_set): the kernel's loops
 * after a loop pass, the model's kernels and arena plan after a model pass; and the
 * rebuilding walks the passes use (ir_expr_map, ir_stmt_map: ir/map.c). */
#include "../../lower/lower.h"
#include "../../lower/passes.h"
#include "test.h"

#include <math.h>

/* what f holds, a copy in the arena (f is closed) */
static char *slurp(FILE *f)
{
    static char buf[1 << 16];
    rewind(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return ir_strdup(buf);
}

/* s as ir_print_stmt prints it ("" when no temporary file can be made) */
static char *stmt_text(const Stmt *s)
{
    FILE *f = tmpfile();
    if (!f)
        return "";
    ir_print_stmt(f, s, 0);
    return slurp(f);
}

/* C[i, j] = sum(k: A[i, k] * B[k, j]), j unrolled */
static Schedule *matmul_unrolled(void)
{
    Program *p = ir_program_new("mm");
    int64_t sa[2] = {4, 2}, sb[2] = {2, 3};
    Tensor *A = ir_placeholder("A", DT_F32, 2, sa), *B = ir_placeholder("B", DT_F32, 2, sb);
    ir_program_add(p, A);
    ir_program_add(p, B);
    IterVar *i = ir_itervar_new("i", 4, IV_SPATIAL), *j = ir_itervar_new("j", 3, IV_SPATIAL);
    IterVar *k = ir_itervar_new("k", 2, IV_REDUCE);
    Expr *ia[2] = {ir_varref(i->var), ir_varref(k->var)}, *ib[2] = {ir_varref(k->var), ir_varref(j->var)};
    IterVar *ax[2] = {i, j};
    Tensor *C = ir_compute("C", 2, ax, ir_reduce(RED_SUM, ir_bin(OP_MUL, ir_access(A, ia, 2), ir_access(B, ib, 2)), &k, 1));
    C->is_output = 1;
    ir_program_add(p, C);
    if (ir_program_verify(p))
        fprintf(stderr, "verify: %s\n", ir_errmsg());
    Schedule *s = sch_create(p);
    sch_unroll(sch_stage(s, C), j);
    return s;
}

/* NAME[i] = IN[i] OP c over 8 elements */
static Tensor *pointwise(Program *p, const char *name, Tensor *in, BinOp op, double c)
{
    IterVar *i = ir_itervar_new("i", 8, IV_SPATIAL);
    Expr *idx = ir_varref(i->var);
    Tensor *t = ir_compute(name, 1, &i, ir_bin(op, ir_access(in, &idx, 1), ir_float(c, DT_F32)));
    ir_program_add(p, t);
    return t;
}

/* X -> C = X + 1 -> D = C * 2 -> E = D + 3 (the output), every stage a kernel of its own:
 * C and D are intermediates in the arena, and D can take C's place. */
static Schedule *chain(void)
{
    Program *p = ir_program_new("m");
    int64_t n = 8;
    Tensor *X = ir_placeholder("X", DT_F32, 1, &n);
    ir_program_add(p, X);
    Tensor *C = pointwise(p, "C", X, OP_ADD, 1);
    Tensor *D = pointwise(p, "D", C, OP_MUL, 2);
    Tensor *E = pointwise(p, "E", D, OP_ADD, 3);
    E->is_output = 1;
    if (ir_program_verify(p))
        fprintf(stderr, "verify: %s\n", ir_errmsg());
    return sch_create(p);
}

/* S[i] = sum(r: X[i, r]) and M[i] = max(r: X[i, r]) over rows of 37, the loops as they
 * come (no schedule) */
static Schedule *row_reductions(void)
{
    Program *p = ir_program_new("rows");
    int64_t sx[2] = {3, 37};
    Tensor *X = ir_placeholder("X", DT_F32, 2, sx);
    ir_program_add(p, X);
    const char *names[2] = {"S", "M"};
    for (int t = 0; t < 2; t++) {
        IterVar *i = ir_itervar_new("i", 3, IV_SPATIAL), *r = ir_itervar_new("r", 37, IV_REDUCE);
        Expr *ix[2] = {ir_varref(i->var), ir_varref(r->var)};
        Tensor *T = ir_compute(names[t], 1, &i, ir_reduce(t ? RED_MAX : RED_SUM, ir_access(X, ix, 2), &r, 1));
        T->is_output = 1;
        ir_program_add(p, T);
    }
    if (ir_program_verify(p))
        fprintf(stderr, "verify: %s\n", ir_errmsg());
    return sch_create(p);
}

/* P = X + 1, then S[i] = sum(r: P[i, r]) and M[i] = max(r: X[i, r]) over 64 rows of
 * `cols`, then T = S + M (the output); no schedule, so no parallel loop; `threads` as a C
 * target for CPUs sets it */
static Schedule *sums_then_add(int64_t cols, int threads)
{
    Program *p = ir_program_new("b");
    int64_t sx[2] = {64, cols};
    Tensor *X = ir_placeholder("X", DT_F32, 2, sx);
    ir_program_add(p, X);
    IterVar *pa[2] = {ir_itervar_new("i", 64, IV_SPATIAL), ir_itervar_new("j", cols, IV_SPATIAL)};
    Expr *pi[2] = {ir_varref(pa[0]->var), ir_varref(pa[1]->var)};
    Tensor *P = ir_compute("P", 2, pa, ir_bin(OP_ADD, ir_access(X, pi, 2), ir_float(1, DT_F32)));
    ir_program_add(p, P);
    Tensor *R[2];
    for (int t = 0; t < 2; t++) {
        IterVar *i = ir_itervar_new("i", 64, IV_SPATIAL), *r = ir_itervar_new("r", cols, IV_REDUCE);
        Expr *ix[2] = {ir_varref(i->var), ir_varref(r->var)};
        R[t] = ir_compute(t ? "M" : "S", 1, &i, ir_reduce(t ? RED_MAX : RED_SUM, ir_access(t ? X : P, ix, 2), &r, 1));
        ir_program_add(p, R[t]);
    }
    IterVar *i = ir_itervar_new("i", 64, IV_SPATIAL);
    Expr *ix = ir_varref(i->var);
    Tensor *T = ir_compute("T", 1, &i, ir_bin(OP_ADD, ir_access(R[0], &ix, 1), ir_access(R[1], &ix, 1)));
    T->is_output = 1;
    ir_program_add(p, T);
    if (ir_program_verify(p))
        fprintf(stderr, "verify: %s\n", ir_errmsg());
    Schedule *s = sch_create(p);
    s->threads = threads;
    return s;
}

/* "beside": the two reductions over rows of 16384 (in 8 lanes: 64 x 2048 vector stores
 * each) write apart and neither reads what the other writes: run side by side. P feeds S:
 * not beside it; T reads what M writes: not beside it. P is read last by S, yet M, which
 * runs beside S, is not placed over it. Without threads, or with too little work (rows
 * of 16), no pair. */
static void test_beside(void)
{
    Model *m = ir_lower_model(sums_then_add(16384, 1), "b");
    CHECK(m != NULL);
    if (!m)
        return;
    CHECK_EQ(4, m->kernels.n);
    CHECK(m->beside && !m->beside[0] && m->beside[1] && !m->beside[2]);
    const Buffer *P = lower_model_buffer(m, "P"), *M = lower_model_buffer(m, "M");
    CHECK(P && M && (P->ws_offset >= M->ws_offset + 256 || M->ws_offset >= P->ws_offset + 64 * 16384 * 4));
    m = ir_lower_model(sums_then_add(16384, 0), "b");
    CHECK(m && !m->beside);
    m = ir_lower_model(sums_then_add(16, 1), "b");
    CHECK(m && m->beside && !m->beside[0] && !m->beside[1] && !m->beside[2]);
}

/* reduce-lanes: each row's terms in 8 lanes over 4 chunks of 8, the last 5 as before, the
 * lanes folded in; sums of small integers, exact in any order, and the maxima as they were */
static void test_lanes(void)
{
    FILE *f = tmpfile();
    if (!f)
        return;
    ir_pass_dump_set("reduce-lanes", f);
    Kernel *k = ir_lower(row_reductions(), "rows");
    ir_pass_dump_set(NULL, NULL);
    char *d = slurp(f);
    CHECK(k != NULL);
    if (!k)
        return;
    CHECK_HAS(d, "for r_outer in [0, +4):");
    CHECK_HAS(d, "vectorized for l in [0, +8):");
    CHECK_HAS(d, "S_lanes[l] = (S_lanes[l] + X[");
    CHECK_HAS(d, "for r in [32, +5):");
    CHECK_HAS(d, "M_lanes[l] = -inf");
    static float X[3 * 37], S[3], M[3];
    for (int i = 0; i < 3 * 37; i++)
        X[i] = (float)((i * 7) % 19) - 9.0f;
    X[40] = 30.0f;    /* row 1's maximum in the lanes, row 2's in the tail */
    X[2 * 37 + 35] = 31.0f;
    void *params[3] = {X, S, M};
    CHECK_EQ(0, ir_interp(k, params, NULL));
    for (int i = 0; i < 3; i++) {
        float s = 0, m = -INFINITY;
        for (int r = 0; r < 37; r++) {
            s += X[i * 37 + r];
            m = X[i * 37 + r] > m ? X[i * 37 + r] : m;
        }
        CHECK(S[i] == s);
        CHECK(M[i] == m);
    }
}

/* runtime-divisions: Y[w] = floor(e / D) * 1000 + e mod D, e = 7 w + 3 D - 20 (negative
 * at first), D decided at run time: the loop steps a quotient and a remainder instead, and
 * computes what it did, for every D tried */
static void test_divisions(void)
{
    Var *D = ir_var_new("D", DT_INDEX), *w = ir_var_new("w", DT_INDEX);
    D->is_dim = 1, D->lo = 1, D->hi = 50;
    int64_t n = 40;
    Buffer *Y = ir_buffer_new("Y", DT_F32, 1, &n, SCOPE_PARAM);
    Expr *e = ir_bin(OP_ADD, ir_bin(OP_MUL, ir_varref(w), ir_idx(7)),
                     ir_bin(OP_SUB, ir_bin(OP_MUL, ir_varref(D), ir_idx(3)), ir_idx(20)));
    Expr *v = ir_bin(OP_ADD, ir_bin(OP_MUL, ir_bin(OP_FLOORDIV, e, ir_varref(D)), ir_idx(1000)),
                     ir_bin(OP_FLOORMOD, e, ir_varref(D)));
    Stmt *loop = ir_for(w, ir_idx(0), ir_idx(n), FOR_SERIAL, ir_store(Y, ir_varref(w), ir_cast(DT_F32, v)));
    Stmt *s = lower_runtime_divisions(loop);
    CHECK(s != loop);
    char *d = stmt_text(s);
    CHECK_HAS(d, "w_q0[0] = ");
    CHECK_HAS(d, "w_r0[0] = ");
    CHECK(!strstr(d, "(w * 7)"));
    /* a constant divisor is left alone */
    Stmt *c = ir_for(w, ir_idx(0), ir_idx(n), FOR_SERIAL,
                     ir_store(Y, ir_varref(w), ir_cast(DT_F32, ir_bin(OP_FLOORDIV, ir_varref(w), ir_idx(3)))));
    CHECK(lower_runtime_divisions(c) == c);
    static const int64_t tries[] = {1, 3, 7, 20, 50};
    for (int t = 0; t < 5; t++) {
        static float out[40];
        Kernel *k = ir_alloc(sizeof *k);
        k->name = "divs";
        ir_vec_push(&k->params, Y, 4, "parameters");
        k->body = ir_let(D, ir_idx(tries[t]), s);
        void *params[1] = {out};
        CHECK_EQ(0, ir_interp(k, params, NULL));
        for (int64_t i = 0; i < n; i++) {
            int64_t x = 7 * i + 3 * tries[t] - 20, q = x >= 0 ? x / tries[t] : -((-x + tries[t] - 1) / tries[t]);
            CHECK(out[i] == (float)(q * 1000 + (x - q * tries[t])));
        }
    }
}

/* runtime-tails on a constant bound: a serial loop holding a register tile, 66 columns in
 * chunks of 16, runs its 4 whole chunks without the guards, then the last one over its 2
 * columns; the same loop without a tile is left to peel-tails */
static void test_const_tails(void)
{
    Var *o = ir_var_new("o", DT_INDEX), *j = ir_var_new("j", DT_INDEX), *jj = ir_var_new("jj", DT_INDEX);
    int64_t n = 66, sixteen = 16;
    Buffer *Y = ir_buffer_new("Y", DT_F32, 1, &n, SCOPE_PARAM);
    Buffer *L = ir_buffer_new("L", DT_F32, 1, &sixteen, SCOPE_LOCAL);
    Expr *col = ir_bin(OP_ADD, ir_bin(OP_MUL, ir_varref(o), ir_idx(16)), ir_varref(j));
    Expr *col2 = ir_bin(OP_ADD, ir_bin(OP_MUL, ir_varref(o), ir_idx(16)), ir_varref(jj));
    Stmt *fill = ir_for(j, ir_idx(0), ir_idx(16), FOR_VECTORIZED,
                        ir_if(ir_bin(OP_LT, col, ir_idx(66)), ir_store(L, ir_varref(j), ir_cast(DT_F32, col)), NULL));
    Stmt *out = ir_for(jj, ir_idx(0), ir_idx(16), FOR_VECTORIZED,
                       ir_if(ir_bin(OP_LT, col2, ir_idx(66)),
                             ir_store(Y, col2, ir_bin(OP_MUL, ir_load(L, ir_varref(jj)), ir_float(2, DT_F32))), NULL));
    Stmt *loop = ir_for(o, ir_idx(0), ir_idx(5), FOR_SERIAL, ir_allocate(L, ir_seq2(fill, out)));
    Stmt *s = ir_simplify_stmt(lower_runtime_tails(loop));
    char *d = stmt_text(s);
    CHECK(!strstr(d, "< 66"));
    CHECK_HAS(d, "for o in [0, +4):");
    CHECK_HAS(d, "vectorized for jj in [0, +2):");
    static float y[66];
    Kernel *k = ir_alloc(sizeof *k);
    k->name = "tails";
    ir_vec_push(&k->params, Y, 4, "parameters");
    k->body = s;
    void *params[1] = {y};
    CHECK_EQ(0, ir_interp(k, params, NULL));
    for (int i = 0; i < 66; i++)
        CHECK(y[i] == 2.0f * (float)i);
    /* no register tile: unchanged */
    Stmt *plain = ir_for(o, ir_idx(0), ir_idx(5), FOR_SERIAL, out);
    CHECK(lower_runtime_tails(plain) == plain);
}

/* runtime-tails over a run-time extent W in chunks of 16 columns that hold a register
 * tile: the last chunk's W % 16 columns run as pieces of 8, 4, 2 and 1 columns (constant
 * vector loops), the tile's columns renamed in each piece; checked against the
 * interpreter at extents of every remainder pattern */
static void test_pow2_tails(void)
{
    Var *W = ir_var_new("W", DT_INDEX), *o = ir_var_new("o", DT_INDEX);
    Var *j = ir_var_new("j", DT_INDEX), *jj = ir_var_new("jj", DT_INDEX);
    W->is_dim = 1, W->lo = 1, W->hi = 64;
    int64_t n = 64, sixteen = 16;
    Buffer *Y = ir_buffer_new("Y", DT_F32, 1, &n, SCOPE_PARAM);
    Buffer *L = ir_buffer_new("L", DT_F32, 1, &sixteen, SCOPE_LOCAL);
    Expr *col = ir_add(ir_mul(ir_varref(o), ir_idx(16)), ir_varref(j));
    Expr *col2 = ir_add(ir_mul(ir_varref(o), ir_idx(16)), ir_varref(jj));
    Stmt *fill = ir_for(j, ir_idx(0), ir_idx(16), FOR_VECTORIZED,
                        ir_if(ir_bin(OP_LT, col, ir_varref(W)), ir_store(L, ir_varref(j), ir_cast(DT_F32, col)), NULL));
    Stmt *out = ir_for(jj, ir_idx(0), ir_idx(16), FOR_VECTORIZED,
                       ir_if(ir_bin(OP_LT, col2, ir_varref(W)),
                             ir_store(Y, col2, ir_bin(OP_ADD, ir_load(L, ir_varref(jj)), ir_float(1, DT_F32))), NULL));
    Expr *chunks = ir_bin(OP_FLOORDIV, ir_add(ir_varref(W), ir_idx(15)), ir_idx(16));
    Stmt *loop = ir_for(o, ir_idx(0), chunks, FOR_SERIAL, ir_allocate(L, ir_seq2(fill, out)));
    Stmt *s = ir_simplify_stmt(lower_runtime_tails(loop));
    char *d = stmt_text(s);
    CHECK_HAS(d, "vectorized for jj in [0, +8):");
    CHECK_HAS(d, "if ((W % 2) >= 1):");
    static const int64_t ws[] = {1, 2, 7, 8, 13, 15, 16, 17, 31, 45, 64};
    for (size_t t = 0; t < sizeof ws / sizeof ws[0]; t++) {
        static float y[64];
        for (int i = 0; i < 64; i++)
            y[i] = -1.0f;
        Kernel *k = ir_alloc(sizeof *k);
        k->name = "pieces";
        ir_vec_push(&k->params, Y, 4, "parameters");
        k->body = ir_let(W, ir_idx(ws[t]), s);
        void *params[1] = {y};
        CHECK_EQ(0, ir_interp(k, params, NULL));
        for (int64_t i = 0; i < 64; i++)
            CHECK(y[i] == (i < ws[t] ? (float)i + 1.0f : -1.0f));
    }
}

/* unswitch on a select whose condition varies over the lanes and is decided at run time
 * (padding of P columns before a row of W): each chunk runs the copy without the select
 * where the condition holds in its first and last lanes, the loop as it was elsewhere;
 * the same select on constants is left to the peeling passes */
static void test_lane_unswitch(void)
{
    Var *P = ir_var_new("P", DT_INDEX), *W = ir_var_new("W", DT_INDEX);
    Var *o = ir_var_new("o", DT_INDEX), *j = ir_var_new("j", DT_INDEX);
    P->is_dim = 1, P->lo = 0, P->hi = 9, W->is_dim = 1, W->lo = 1, W->hi = 40;
    int64_t n = 64;
    Buffer *X = ir_buffer_new("X", DT_F32, 1, &n, SCOPE_PARAM), *Y = ir_buffer_new("Y", DT_F32, 1, &n, SCOPE_PARAM);
    for (int dyn = 0; dyn < 2; dyn++) {
        Expr *pad = dyn ? ir_varref(P) : ir_idx(3), *w = dyn ? ir_varref(W) : ir_idx(20);
        Expr *c = ir_sub(ir_add(ir_mul(ir_varref(o), ir_idx(16)), ir_varref(j)), pad);
        Expr *cond = ir_bin(OP_AND, ir_bin(OP_GE, c, ir_idx(0)), ir_bin(OP_LT, c, w));
        Expr *val = ir_select(cond, ir_load(X, c), ir_float(0, DT_F32));
        Stmt *vec = ir_for(j, ir_idx(0), ir_idx(16), FOR_VECTORIZED,
                           ir_store(Y, ir_add(ir_mul(ir_varref(o), ir_idx(16)), ir_varref(j)), val));
        Stmt *loop = ir_for(o, ir_idx(0), ir_idx(4), FOR_SERIAL, vec);
        Stmt *s = lower_unswitch(loop);
        if (!dyn) {
            CHECK(s == loop);
            continue;
        }
        CHECK(s != loop && s->kind == S_FOR && s->u.loop.body->kind == S_IF);
        if (s->kind != S_FOR || s->u.loop.body->kind != S_IF)
            return;
        const Stmt *then = s->u.loop.body->u.cond.then;
        CHECK(then->kind == S_FOR && then->u.loop.body->kind == S_STORE &&
              then->u.loop.body->u.store.value->kind == E_LOAD);
        static const int64_t pw[][2] = {{0, 40}, {3, 20}, {9, 1}, {5, 33}};
        for (int t = 0; t < 4; t++) {
            static float x[64], y[64];
            for (int i = 0; i < 64; i++)
                x[i] = (float)(i + 1);
            Kernel *k = ir_alloc(sizeof *k);
            k->name = "lanes";
            ir_vec_push(&k->params, X, 4, "parameters");
            ir_vec_push(&k->params, Y, 4, "parameters");
            k->body = ir_let(P, ir_idx(pw[t][0]), ir_let(W, ir_idx(pw[t][1]), s));
            void *params[2] = {x, y};
            CHECK_EQ(0, ir_interp(k, params, NULL));
            for (int64_t i = 0; i < 64; i++) {
                int64_t ci = i - pw[t][0];
                CHECK(y[i] == (ci >= 0 && ci < pw[t][1] ? x[ci] : 0.0f));
            }
        }
    }
}

/* The simplifier drops `w < E` inside a CPU loop over [0, E), E decided at run time (a
 * stage's guard on its own row); a GPU thread loop's grid may overhang: kept there */
static void test_loop_bound(void)
{
    Var *H = ir_var_new("H", DT_INDEX), *w = ir_var_new("w", DT_INDEX);
    H->is_dim = 1, H->lo = 1, H->hi = 64;
    int64_t n = 128;
    Buffer *Y = ir_buffer_new("Y", DT_F32, 1, &n, SCOPE_PARAM);
    Expr *E = ir_bin(OP_MUL, ir_varref(H), ir_idx(2));
    for (int gpu = 0; gpu < 2; gpu++) {
        Stmt *body = ir_if(ir_bin(OP_LT, ir_varref(w), E), ir_store(Y, ir_varref(w), ir_float(1, DT_F32)), NULL);
        Stmt *loop = ir_for(w, ir_idx(0), E, gpu ? FOR_BOUND : FOR_PARALLEL, body);
        if (gpu)
            loop->u.loop.bind_tag = "blockIdx.x";
        Stmt *r = ir_simplify_stmt(loop);
        CHECK(r && r->kind == S_FOR);
        if (r && r->kind == S_FOR)
            CHECK_EQ(gpu ? S_IF : S_STORE, r->u.loop.body->kind);
    }
}

/* what --dump=NAME prints while lowering the unrolled matmul into one kernel */
static char *dump_kernel(const char *name, Kernel **out)
{
    FILE *f = tmpfile();
    if (!f)
        return "(tmpfile failed)";
    ir_pass_dump_set(name, f);
    *out = ir_lower(matmul_unrolled(), "mm");
    ir_pass_dump_set(NULL, NULL);
    return slurp(f);
}

/* what --dump=NAME prints while lowering the chain as a model */
static char *dump_model(const char *name, Model **out)
{
    FILE *f = tmpfile();
    if (!f)
        return "(tmpfile failed)";
    ir_pass_dump_set(name, f);
    *out = ir_lower_model(chain(), "m");
    ir_pass_dump_set(NULL, NULL);
    return slurp(f);
}

/* ir_expr_map's callback: the variable ctx points to becomes 7, everything else is walked */
static Expr *var_to_7(Expr *e, void *ctx)
{
    if (e->kind == E_VAR && e->u.var == ctx)
        return ir_idx(7);
    return ir_expr_map(e, var_to_7, ctx);
}

/* ir_stmt_map's: every store's value gets + 1 (the statements around it are walked) */
static Stmt *plus_one(Stmt *s, void *ctx)
{
    if (s->kind == S_STORE)
        return ir_store(s->u.store.buf, s->u.store.index, ir_bin(OP_ADD, s->u.store.value, ir_idx(1)));
    return ir_stmt_map(s, plus_one, NULL, ctx);
}

static void test_maps(void)
{
    Var *x = ir_var_new("x", DT_INDEX), *y = ir_var_new("y", DT_INDEX);
    Expr *e = ir_bin(OP_MUL, ir_bin(OP_ADD, ir_varref(x), ir_idx(1)), ir_select(ir_bin(OP_LT, ir_varref(y), ir_idx(3)),
                                                                              ir_varref(x), ir_varref(y)));
    /* nothing to change: the expression itself, no copy */
    CHECK(var_to_7(e, ir_var_new("z", DT_INDEX)) == e);
    Expr *r = var_to_7(e, x);
    CHECK(r != e);
    FILE *f = tmpfile();
    if (f) {
        ir_print_expr(f, r);
        CHECK_STR("((7 + 1) * select((y < 3), 7, y))", slurp(f));
    }
    /* the part that did not change is shared: the select's condition */
    CHECK(r->u.bin.b->u.sel.cond == e->u.bin.b->u.sel.cond);

    int64_t four = 4;
    Buffer *b = ir_buffer_new("b", DT_I32, 1, &four, SCOPE_LOCAL);
    Stmt *loop = ir_for(x, ir_idx(0), ir_idx(4), FOR_VECTORIZED,
                        ir_seq2(ir_store(b, ir_varref(x), ir_varref(x)), ir_if(ir_bin(OP_LT, ir_varref(x), ir_idx(2)),
                                                                             ir_store(b, ir_varref(x), ir_idx(0)), NULL)));
    Stmt *s = plus_one(loop, NULL);
    CHECK(s->kind == S_FOR && s->u.loop.kind == FOR_VECTORIZED && s->u.loop.var == x);
    CHECK_STR("vectorized for x in [0, +4):\n  b[x] = (x + 1)\n  if (x < 2):\n    b[x] = (0 + 1)\n", stmt_text(s));
    /* an expression callback over a statement: the loop's bounds, the if's condition, the
     * stores' indices and values */
    s = ir_stmt_map(loop->u.loop.body->u.seq.items[1], NULL, var_to_7, x);
    CHECK_STR("if (7 < 2):\n  b[x] = 0\n", stmt_text(s));
}

int main(void)
{
    Arena *a = ir_arena_new();
    ir_arena_set(a);

    /* the pass lists, in the order the passes run */
    static const char *loop_names[] = {"simplify", "runtime-tails", "unroll", "peel-tails", "peel-heads", "unswitch",
                                       "reduce-interchange", "reduce-lanes", "tensorize", "runtime-divisions",
                                       "check-loops"};
    static const char *model_names[] = {"partition", "run-time-loops", "value-dims", "beside", "prune-constants",
                                        "in-place", "arena"};
    int n = -1;
    const PassInfo *lp = lower_loop_passes(&n);
    CHECK_EQ(11, n);
    for (int i = 0; i < n && i < 11; i++) {
        CHECK_STR(loop_names[i], lp[i].name);
        CHECK(lp[i].what && strlen(lp[i].what) > 10);
    }
    const PassInfo *mp = lower_model_passes(&n);
    CHECK_EQ(7, n);
    for (int i = 0; i < n && i < 7; i++) {
        CHECK_STR(model_names[i], mp[i].name);
        CHECK(mp[i].what && strlen(mp[i].what) > 10);
    }

    /* a loop pass's dump: the kernel's loops as that pass left them. Before "unroll" the
     * loop over j is an unrolled loop; after it, three copies of its body. */
    Kernel *k = NULL;
    char *d = dump_kernel("simplify", &k);
    CHECK(k != NULL);
    CHECK(!strncmp(d, "kernel mm after simplify:\n", 26));
    CHECK_HAS(d, "unrolled for j in [0, +3):");
    d = dump_kernel("unroll", &k);
    CHECK(!strncmp(d, "kernel mm after unroll:\n", 24));
    CHECK(!strstr(d, "for j"));
    CHECK_HAS(d, "C[((i * 3) + 2)] = 0.0");
    /* after the last pass: exactly the kernel's body */
    d = dump_kernel("check-loops", &k);
    FILE *f = tmpfile();
    if (f) {
        fputs("kernel mm after check-loops:\n", f);
        ir_print_stmt(f, k->body, 1);
        CHECK_STR(slurp(f), d);
    }
    /* no such pass: nothing printed, and the kernel is the same */
    d = dump_kernel("no-such-pass", &k);
    CHECK_STR("", d);
    CHECK(k != NULL);

    /* model passes: the kernels after "partition", the aliases after "in-place" (D takes
     * the place of C, which dies in D's kernel), the plan after "arena" */
    Model *m = NULL;
    d = dump_model("partition", &m);
    CHECK(m != NULL);
    CHECK_EQ(3, m->kernels.n);
    CHECK(!strncmp(d, "model m after partition: 3 kernels\n", 35));
    CHECK_HAS(d, "kernel m_C(X: f32[8], out C: f32[8])");
    CHECK_HAS(d, "kernel m_E(");
    d = dump_model("in-place", &m);
    CHECK_EQ(1, m->ninplace);
    CHECK_HAS(d, "model m after in-place: 1 of 2 intermediates in place\n");
    CHECK_HAS(d, "  D: kernels 1 to 2, in place of C\n");
    d = dump_model("arena", &m);
    CHECK(m->arena_bytes == 64);   /* one 64-byte slice for both */
    CHECK_HAS(d, "model m after arena: 64 bytes (at least 64 live at once), slices aligned to 64\n");
    CHECK_HAS(d, "  C at 0, 64 bytes, kernels 0 to 1\n");
    CHECK_HAS(d, "  D at 0, 64 bytes, kernels 1 to 2\n");
    d = dump_model("run-time-loops", &m);
    CHECK_HAS(d, "model m after run-time-loops: 3 kernels\n  m_C\n  m_D\n  m_E\n");
    d = dump_model("prune-constants", &m);
    CHECK_STR("model m after prune-constants: 0 constants\n", d);
    /* the loop passes of a model's kernels dump each kernel, named */
    d = dump_model("unroll", &m);
    CHECK_HAS(d, "kernel m_C after unroll:\n");
    CHECK_HAS(d, "kernel m_E after unroll:\n");

    test_maps();
    test_lanes();
    test_divisions();
    test_loop_bound();
    test_beside();
    test_const_tails();
    test_pow2_tails();
    test_lane_unswitch();

    ir_arena_free(a);
    return test_done("lower");
}
