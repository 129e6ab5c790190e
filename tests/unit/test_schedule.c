/* test_schedule.c - every schedule primitive, its misuse messages, and what the
 * lowering makes of it (bound inference for compute_at, tails, unrolling). */
#include "../../lower/lower.h"
#include "test.h"

static char *render_kernel(const Kernel *k)
{
    static char buf[1 << 16];
    FILE *f = tmpfile();
    if (!f)
        return "(tmpfile failed)";
    ir_print_kernel(f, k);
    rewind(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

typedef struct {
    Program *p;
    Schedule *s;
    Tensor *A, *B, *C;
    IterVar *i, *j, *k;
} MM;

/* C[i, j] = sum(k: A[i, k] * B[k, j]) */
static MM matmul(int64_t M, int64_t N, int64_t K)
{
    MM r;
    r.p = ir_program_new("mm");
    int64_t sa[2] = {M, K}, sb[2] = {K, N};
    r.A = ir_placeholder("A", DT_F32, 2, sa);
    r.B = ir_placeholder("B", DT_F32, 2, sb);
    ir_program_add(r.p, r.A);
    ir_program_add(r.p, r.B);
    r.i = ir_itervar_new("i", M, IV_SPATIAL);
    r.j = ir_itervar_new("j", N, IV_SPATIAL);
    r.k = ir_itervar_new("k", K, IV_REDUCE);
    Expr *ia[2] = {ir_varref(r.i->var), ir_varref(r.k->var)}, *ib[2] = {ir_varref(r.k->var), ir_varref(r.j->var)};
    IterVar *ax[2] = {r.i, r.j};
    r.C = ir_compute("C", 2, ax, ir_reduce(RED_SUM, ir_bin(OP_MUL, ir_access(r.A, ia, 2), ir_access(r.B, ib, 2)), &r.k, 1));
    r.C->is_output = 1;
    ir_program_add(r.p, r.C);
    if (ir_program_verify(r.p))
        fprintf(stderr, "verify: %s\n", ir_errmsg());
    r.s = sch_create(r.p);
    return r;
}

int main(void)
{
    Arena *a = ir_arena_new();
    ir_arena_set(a);
    IterVar *o, *in, *o2, *in2, *f;

    /* no schedule: a plain nest with the init before the reduce loop */
    MM m = matmul(4, 3, 2);
    Kernel *k = ir_lower(m.s, "mm");
    CHECK(k != NULL);
    CHECK_STR("kernel mm(A: f32[4, 2], B: f32[2, 3], out C: f32[4, 3]) workspace 0 bytes\n"
              "  for i in [0, +4):\n"
              "    for j in [0, +3):\n"
              "      C[((i * 3) + j)] = 0.0\n"
              "      for k in [0, +2):\n"
              "        C[((i * 3) + j)] = (C[((i * 3) + j)] + (A[((i * 2) + k)] * B[((k * 3) + j)]))\n",
              render_kernel(k));

    /* split with a tail: the guard sits at the inner loop; divisible splits have none */
    m = matmul(10, 8, 2);
    Stage *C = sch_stage(m.s, m.C);
    CHECK_EQ(0, sch_split(C, m.i, 4, &o, &in));
    CHECK_EQ(0, sch_split(C, m.j, 4, &o2, &in2));
    k = ir_lower(m.s, "mm");
    CHECK_HAS(render_kernel(k), "for i_outer in [0, +3):");
    CHECK_HAS(render_kernel(k), "if (((i_outer * 4) + i_inner) < 10):");
    CHECK(!strstr(render_kernel(k), "j_inner) < 8"));

    /* split factor larger than the extent: one outer iteration, no guard */
    m = matmul(3, 3, 3);
    C = sch_stage(m.s, m.C);
    CHECK_EQ(0, sch_split(C, m.i, 8, &o, &in));
    k = ir_lower(m.s, "mm");
    CHECK(!strstr(render_kernel(k), "if "));
    CHECK(!strstr(render_kernel(k), "i_outer"));   /* the unit loop vanished */

    /* fuse: div/mod of the fused index simplify back when the inner extent divides */
    m = matmul(6, 4, 1);
    C = sch_stage(m.s, m.C);
    CHECK_EQ(0, sch_fuse(C, m.i, m.j, &f));
    k = ir_lower(m.s, "mm");
    CHECK_HAS(render_kernel(k), "for i_j_fused in [0, +24):");
    CHECK_HAS(render_kernel(k), "C[i_j_fused]");

    /* misuse */
    m = matmul(8, 8, 8);
    C = sch_stage(m.s, m.C);
    CHECK_EQ(-1, sch_fuse(C, m.i, m.k, &f));
    CHECK_HAS(ir_errmsg(), "fuse: i must come right before k");
    CHECK_EQ(-1, sch_split(C, m.i, 0, &o, &in));
    CHECK_HAS(ir_errmsg(), "factor 0 of C.i must be at least 1");
    CHECK_EQ(-1, sch_vectorize(C, m.k));
    CHECK_HAS(ir_errmsg(), "vectorize: k is a reduce axis of C");
    CHECK_EQ(-1, sch_parallel(C, m.k));
    CHECK_HAS(ir_errmsg(), "race");
    CHECK_EQ(-1, sch_vectorize(sch_stage(m.s, m.A), m.i));
    CHECK_HAS(ir_errmsg(), "A is an input and has no loops");
    IterVar *stray = ir_itervar_new("q", 4, IV_SPATIAL);
    IterVar *ord[2] = {m.k, stray};
    CHECK_EQ(-1, sch_reorder(C, ord, 2));
    CHECK_HAS(ir_errmsg(), "reorder: 'q' is not a current loop axis of stage C (axes: i, j, k)");
    IterVar *dup[2] = {m.k, m.k};
    CHECK_EQ(-1, sch_reorder(C, dup, 2));
    CHECK_HAS(ir_errmsg(), "listed twice");
    CHECK_EQ(-1, sch_unroll(C, m.i) == 0 ? sch_unroll(C, m.i) - 1 : -1);   /* unroll twice is fine */
    m = matmul(8, 100, 8);
    C = sch_stage(m.s, m.C);
    CHECK_EQ(0, sch_unroll(C, m.j));
    CHECK(ir_lower(m.s, "mm") == NULL);
    CHECK_HAS(ir_errmsg(), "unroll: axis j of C has extent 100, above the limit of 64 (split it first)");
    m = matmul(8, 100, 8);
    C = sch_stage(m.s, m.C);
    CHECK_EQ(-1, sch_compute_inline(m.s, C));
    CHECK_HAS(ir_errmsg(), "C is an output");
    CHECK_EQ(-1, sch_compute_at(m.s, C, C, m.i));
    CHECK_EQ(-1, sch_storage_align(C, 0, 4, 1));
    CHECK_EQ(-1, sch_bind(C, m.i, "threadIdx.w"));
    CHECK_HAS(ir_errmsg(), "unknown thread tag");
    CHECK_EQ(0, sch_bind(C, m.i, "blockIdx.x"));
    Scope sc;
    CHECK_EQ(-1, sch_parse_scope("register", &sc));
    CHECK_EQ(0, sch_parse_scope("shared", &sc));

    /* prefetch: in each step of the innermost reduce loop, B's line for the next k_outer
     * (clamped to the last), the tile's j at the value of the rows axis i modulo 4 (i < 2:
     * i itself) */
    m = matmul(2, 4, 8);
    C = sch_stage(m.s, m.C);
    CHECK_EQ(0, sch_split(C, m.k, 2, &o, &in));
    IterVar *ordp[4] = {o, m.i, in, m.j};
    CHECK_EQ(0, sch_reorder(C, ordp, 4));
    CHECK_EQ(0, sch_prefetch(C, m.B, o, m.i, m.j));
    k = ir_lower(m.s, "mm");
    CHECK(k != NULL);
    CHECK_HAS(render_kernel(k), "      for k_inner in [0, +2):\n"
                                "        prefetch B[(((min((k_outer + 1), 3) * 8) + (k_inner * 4)) + i)]\n"
                                "        for j in [0, +4):\n");
    CHECK_EQ(-1, sch_prefetch(C, m.B, m.i, NULL, NULL));
    CHECK_HAS(ir_errmsg(), "prefetch: i is not a reduce axis of C");
    CHECK_EQ(-1, sch_prefetch(C, m.B, o, NULL, m.j));
    CHECK_HAS(ir_errmsg(), "blocks axis j needs a rows axis");
    CHECK_EQ(-1, sch_prefetch(C, m.C, o, NULL, NULL));
    CHECK_HAS(ir_errmsg(), "prefetch: stage C does not read C");
    CHECK_EQ(0, sch_prefetch(C, m.B, in, NULL, NULL));   /* the innermost reduce loop itself */
    CHECK(ir_lower(m.s, "mm") == NULL);
    CHECK_HAS(ir_errmsg(), "loops outside the innermost reduce loop");

    /* head peeling: a padded copy's left border (i - 3 >= 0) decided in the first chunk
     * of 16 only; the chunks after it copy without a condition */
    {
        Program *pp = ir_program_new("padcopy");
        int64_t sa = 80, sp = 85;
        Tensor *A = ir_placeholder("A", DT_F32, 1, &sa);
        ir_program_add(pp, A);
        IterVar *pi = ir_itervar_new("i", sp, IV_SPATIAL);
        Expr *src = ir_bin(OP_SUB, ir_varref(pi->var), ir_idx(3));
        Expr *in = ir_bin(OP_AND, ir_bin(OP_GE, src, ir_idx(0)), ir_bin(OP_LT, src, ir_idx(80)));
        Tensor *P = ir_compute("P", 1, &pi, ir_select(in, ir_access(A, &src, 1), ir_float(0, DT_F32)));
        P->is_output = 1;
        ir_program_add(pp, P);
        CHECK_EQ(0, ir_program_verify(pp));
        Schedule *ps = sch_create(pp);
        Stage *PS = sch_stage(ps, P);
        CHECK_EQ(0, sch_split(PS, pi, 16, &o, &in2));
        CHECK_EQ(0, sch_vectorize(PS, in2));
        k = ir_lower(ps, "padcopy");
        CHECK(k != NULL);
        const char *txt = render_kernel(k);
        CHECK_HAS(txt, "  vectorized for i_inner in [0, +16):\n"
                       "    P[i_inner] = select(((i_inner - 3) >= 0), A[(i_inner - 3)], 0.0)\n"
                       "  for i_outer in [1, +4):\n");
        CHECK_HAS(txt, "      P[((i_outer * 16) + i_inner)] = A[(((i_outer * 16) + i_inner) - 3)]\n");
    }

    /* reorder: a reduce axis may move outward, the init goes before it */
    m = matmul(2, 3, 4);
    C = sch_stage(m.s, m.C);
    IterVar *ord2[3] = {m.k, m.i, m.j};
    CHECK_EQ(0, sch_reorder(C, ord2, 3));
    k = ir_lower(m.s, "mm");
    CHECK_STR("kernel mm(A: f32[2, 4], B: f32[4, 3], out C: f32[2, 3]) workspace 0 bytes\n"
              "  for i in [0, +2):\n"
              "    for j in [0, +3):\n"
              "      C[((i * 3) + j)] = 0.0\n"
              "  for k in [0, +4):\n"
              "    for i in [0, +2):\n"
              "      for j in [0, +3):\n"
              "        C[((i * 3) + j)] = (C[((i * 3) + j)] + (A[((i * 4) + k)] * B[((k * 3) + j)]))\n",
              render_kernel(k));

    /* cache_write + compute_at: the local tile covers exactly the consumer's tile */
    m = matmul(16, 16, 4);
    C = sch_stage(m.s, m.C);
    Stage *CC = sch_cache_write(m.s, C, SCOPE_LOCAL);
    CHECK(CC != NULL);
    IterVar *io, *jo, *ii, *ji;
    CHECK_EQ(0, sch_tile(C, m.i, m.j, 4, 8, &io, &jo, &ii, &ji));
    CHECK_EQ(0, sch_compute_at(m.s, CC, C, jo));
    CHECK_EQ(0, sch_unroll(CC, sch_find_axis(CC, "i")));
    CHECK_EQ(0, sch_vectorize(CC, sch_find_axis(CC, "j")));
    IterVar *ord3[3] = {sch_find_axis(CC, "k"), sch_find_axis(CC, "i"), sch_find_axis(CC, "j")};
    CHECK_EQ(0, sch_reorder(CC, ord3, 3));
    k = ir_lower(m.s, "mm");
    const char *r = render_kernel(k);
    CHECK_HAS(r, "allocate C_local: f32[32] in local");
    CHECK_HAS(r, "vectorized for j in [0, +8):");
    CHECK_HAS(r, "C_local[(j + 24)] = (C_local[(j + 24)] + (A[(((i_outer * 16) + k) + 12)]");
    CHECK_HAS(r, "C[((((i_outer * 64) + (i_inner * 16)) + (j_outer * 8)) + j_inner)] = C_local[((i_inner * 8) + j_inner)]");
    CHECK(!strstr(r, "if "));
    /* cache_write after a split is refused */
    m = matmul(8, 8, 8);
    C = sch_stage(m.s, m.C);
    sch_split(C, m.i, 2, &o, &in);
    CHECK(sch_cache_write(m.s, C, SCOPE_LOCAL) == NULL);
    CHECK_HAS(ir_errmsg(), "before split");

    /* cache_read + compute_at at the reduce loop: a packed panel of B per k step */
    m = matmul(8, 8, 8);
    C = sch_stage(m.s, m.C);
    Stage *readers[1] = {C};
    Stage *BB = sch_cache_read(m.s, m.B, SCOPE_LOCAL, readers, 1);
    CHECK(BB != NULL);
    CHECK_EQ(0, sch_split(C, m.k, 2, &o, &in));
    IterVar *ord4[4] = {m.i, o, m.j, in};
    CHECK_EQ(0, sch_reorder(C, ord4, 4));
    CHECK_EQ(0, sch_compute_at(m.s, BB, C, o));
    k = ir_lower(m.s, "mm");
    r = render_kernel(k);
    CHECK_HAS(r, "allocate B_local: f32[16] in local");
    CHECK_HAS(r, "B_local[((ax0 * 8) + ax1)] = B[(((k_outer * 16) + (ax0 * 8)) + ax1)]");
    CHECK(sch_cache_read(m.s, m.A, SCOPE_LOCAL, (Stage *[]){BB}, 1) == NULL);
    CHECK_HAS(ir_errmsg(), "B_local does not read A");

    /* a producer read by two stages computed at the same loop (softmax) */
    {
        Program *p = ir_program_new("sm");
        int64_t sx[2] = {3, 5};
        Tensor *X = ir_placeholder("X", DT_F32, 2, sx);
        ir_program_add(p, X);
        IterVar *r1 = ir_itervar_new("r", 3, IV_SPATIAL), *l1 = ir_itervar_new("l", 5, IV_REDUCE);
        Expr *x1[2] = {ir_varref(r1->var), ir_varref(l1->var)};
        Tensor *Mx = ir_compute("Mx", 1, &r1, ir_reduce(RED_MAX, ir_access(X, x1, 2), &l1, 1));
        ir_program_add(p, Mx);
        IterVar *r2 = ir_itervar_new("r", 3, IV_SPATIAL), *l2 = ir_itervar_new("l", 5, IV_REDUCE);
        Expr *x2[2] = {ir_varref(r2->var), ir_varref(l2->var)}, *m2[1] = {ir_varref(r2->var)};
        Tensor *Sm = ir_compute("Sm", 1, &r2,
                                ir_reduce(RED_SUM, ir_bin(OP_SUB, ir_access(X, x2, 2), ir_access(Mx, m2, 1)), &l2, 1));
        ir_program_add(p, Sm);
        IterVar *ax[2] = {ir_itervar_new("r", 3, IV_SPATIAL), ir_itervar_new("l", 5, IV_SPATIAL)};
        Expr *x3[2] = {ir_varref(ax[0]->var), ir_varref(ax[1]->var)}, *m3[1] = {ir_varref(ax[0]->var)};
        Tensor *Y = ir_compute("Y", 2, ax, ir_bin(OP_DIV, ir_access(Mx, m3, 1), ir_access(Sm, m3, 1)));
        (void)x3;
        Y->is_output = 1;
        ir_program_add(p, Y);
        CHECK_EQ(0, ir_program_verify(p));
        Schedule *s = sch_create(p);
        Stage *sy = sch_stage(s, Y);
        CHECK_EQ(0, sch_compute_at(s, sch_stage(s, Mx), sy, ax[0]));
        k = ir_lower(s, "sm");
        CHECK(k == NULL);
        CHECK_HAS(ir_errmsg(), "Mx is also read by Sm");
        CHECK_EQ(0, sch_compute_at(s, sch_stage(s, Sm), sy, ax[0]));
        k = ir_lower(s, "sm");
        CHECK(k != NULL);
        r = k ? render_kernel(k) : "";
        CHECK_HAS(r, "allocate Mx: f32[1] in local");
        CHECK_HAS(r, "Sm[0] = (Sm[0] + (X[((r * 5) + l)] - Mx[0]))");
    }

    /* storage_align pads the row stride of an intermediate */
    m = matmul(4, 4, 4);
    C = sch_stage(m.s, m.C);
    BB = sch_cache_read(m.s, m.B, SCOPE_LOCAL, (Stage *[]){C}, 1);
    CHECK_EQ(-1, sch_storage_align(BB, 1, 8, 1));
    CHECK_EQ(0, sch_storage_align(BB, 0, 8, 1));
    k = ir_lower(m.s, "mm");
    CHECK_HAS(render_kernel(k), "B_local[((ax0 * 9) + ax1)]");
    CHECK_HAS(render_kernel(k), "allocate B_local: f32[36] in local");

    ir_arena_free(a);
    return test_done("schedule");
}
