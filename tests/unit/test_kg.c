/* test_kg.c - the .kg frontend (gen/lex.c, gen/kg*.c): small sources parsed with
 * gen_parse_kg and their Program/Schedule checked, then an error corpus where every
 * malformed source must fail with its message at its line:col, then mutated sources that
 * must parse or fail cleanly (never crash). */
#include "../../gen/gen.h"
#include "test.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static KgModule mod;

static int parse_defs(const char *src, const char *target, Define *defs, int ndefs)
{
    ir_clear_error();
    return gen_parse_kg("t.kg", src, defs, ndefs, target, &mod);
}

static int parse(const char *src, const char *target) { return parse_defs(src, target, NULL, 0); }

/* the tensor IR dump of the parsed program */
static const char *dump_program(void)
{
    static char buf[1 << 16];
    FILE *f = tmpfile();
    if (!f)
        return "(tmpfile failed)";
    ir_print_program(f, mod.prog);
    rewind(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

static Tensor *tensor(const char *name) { return mod.prog ? ir_program_find(mod.prog, name) : NULL; }

/* the leaf loop names of a stage, space separated */
static const char *loops(const char *stage)
{
    static char buf[1024];
    Stage *st = mod.sched ? sch_find(mod.sched, stage) : NULL;
    if (!st)
        return "(no stage)";
    buf[0] = 0;
    for (int i = 0; i < st->leaf.n; i++) {
        IterVar *iv = st->leaf.items[i];
        snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s", i ? " " : "", iv->var->name);
    }
    return buf;
}

/* an axis of a stage; a dummy when missing, so a failed check does not crash the rest */
static IterVar *axis(const char *stage, const char *name)
{
    static IterVar none;
    static Var none_var = {.name = "(missing axis)", .dtype = DT_INDEX};
    none.var = &none_var;
    Stage *st = mod.sched ? sch_find(mod.sched, stage) : NULL;
    IterVar *iv = st ? sch_find_axis(st, name) : NULL;
    if (!iv)
        fprintf(stderr, "no axis %s in stage %s\n", name, stage);
    return iv ? iv : &none;
}

/* ---------------------------------------------------------------- error checks */

/* src must fail with "t.kg:LINE:COL: error: ...MSG..." ("t.kg: error: ..." for line 0). */
static void fails_at(int at, const char *src, const char *target, Define *defs, int ndefs, int line, int col,
                     const char *msg)
{
    int rc = parse_defs(src, target, defs, ndefs);
    const char *e = ir_errmsg();
    char head[64];
    if (line)
        snprintf(head, sizeof head, "t.kg:%d:%d: error: ", line, col);
    else
        snprintf(head, sizeof head, "t.kg: error: ");
    if (rc == -1 && !strncmp(e, head, strlen(head)) && strstr(e, msg) && !mod.prog) {
        test_passed++;
        return;
    }
    test_failed++;
    fprintf(stderr, "test_kg.c:%d: expected failure \"%s...%s\", got rc %d:\n%s\n", at, head, msg, rc, e);
}

#define FAILS(src, line, col, msg) fails_at(__LINE__, src, "c", NULL, 0, line, col, msg)
#define FAILS_T(src, target, line, col, msg) fails_at(__LINE__, src, target, NULL, 0, line, col, msg)

/* A program whose schedule section holds one statement, on line 5 at column 5. */
#define SCHED_BASE                                                  \
    "input A : f32[64, 32]\n"                                       \
    "input B : f32[32, 64]\n"                                       \
    "output C[i < 64, j < 64] = sum(k < 32: A[i, k] * B[k, j])\n"

static void sched_fails_at(int at, const char *stmts, int line, int col, const char *msg)
{
    char src[4096];
    snprintf(src, sizeof src, SCHED_BASE "schedule c {\n%s\n}\n", stmts);
    fails_at(at, src, "c", NULL, 0, line, col, msg);
}
#define SCHED_FAILS(stmts, line, col, msg) sched_fails_at(__LINE__, stmts, line, col, msg)

static int sched_ok(const char *stmts)
{
    char src[4096];
    snprintf(src, sizeof src, SCHED_BASE "schedule c {\n%s\n}\n", stmts);
    int rc = parse(src, "c");
    if (rc)
        fprintf(stderr, "unexpected error: %s\n", ir_errmsg());
    return rc;
}

/* ---------------------------------------------------------------- programs */

static const char *matmul_src =
    "# matmul.kg \xe2\x80\x94 comments start with '#'\n"
    "kernel matmul                    # optional: the kernel's name\n"
    "\n"
    "param M = 1024                   # integer constants; -DM=100 overrides\n"
    "param N = 1024\n"
    "param K = 512\n"
    "\n"
    "input A : f32[M, K]\n"
    "input B : f32[K, N]\n"
    "\n"
    "Bp[jo < N / 16, k < K, ji < 16] = B[k, jo * 16 + ji]\n"
    "output C[i < M, j < N] = sum(k < K: A[i, k] * Bp[j / 16, k, j % 16])\n"
    "\n"
    "schedule c {\n"
    "    CC = cache_write(C, local)            # new stage CC\n"
    "    io, jo, ii, ji = tile(C, i, j, 8, 32)\n"
    "    compute_at(CC, C, jo)\n"
    "    ko, ki = split(CC, k, 4)\n"
    "    reorder(CC, ko, ki, i, j)\n"
    "    unroll(CC, ki)\n"
    "    unroll(CC, i)\n"
    "    vectorize(CC, j)\n"
    "    parallel(C, io)\n"
    "    compute_inline(Bp)\n"
    "}\n"
    "\n"
    "schedule cuda {\n"
    "    io, jo, ii, ji = tile(C, i, j, 8, 32)\n"
    "    bind(C, io, blockIdx.x)\n"
    "    bind(C, ii, threadIdx.x)\n"
    "    BB = cache_read(B, shared, Bp)\n"
    "    f = fuse(C, io, jo)\n"
    "    storage_align(Bp, 0, 16, 1)\n"
    "}\n";

static void test_matmul(void)
{
    CHECK_EQ(0, parse(matmul_src, "c"));
    CHECK_STR("matmul", mod.kernel_name);
    CHECK_EQ(1, mod.scheduled);
    CHECK_STR("program matmul\n"
              "  input A : f32[1024, 512]\n"
              "  input B : f32[512, 1024]\n"
              "  Bp[jo < 64, k < 512, ji < 16] : f32 = B[k, ((jo * 16) + ji)]\n"
              "  CC[i < 1024, j < 1024] : f32 = sum(k < 512: (A[i, k] * Bp[(j / 16), k, (j % 16)]))\n"
              "  output C[i < 1024, j < 1024] : f32 = CC[i, j]\n",
              dump_program());
    CHECK_EQ(10, mod.schedule_lines.n);
    if (mod.schedule_lines.n == 10) {
        CHECK_STR("CC = cache_write(C, local)", mod.schedule_lines.items[0]);
        CHECK_STR("io, jo, ii, ji = tile(C, i, j, 8, 32)", mod.schedule_lines.items[1]);
        CHECK_STR("compute_inline(Bp)", mod.schedule_lines.items[9]);
    }
    CHECK_STR("io jo ii ji", loops("C"));
    CHECK_STR("ko ki i j", loops("CC"));
    Stage *cc = sch_find(mod.sched, "CC");
    CHECK(cc && cc->attach == ATTACH_AT && cc->attach_stage == sch_find(mod.sched, "C") &&
          cc->attach_iv == axis("C", "jo"));
    CHECK(cc && cc->scope == SCOPE_LOCAL);
    CHECK_EQ(ANN_UNROLL, axis("CC", "ki")->ann);
    CHECK_EQ(ANN_UNROLL, axis("CC", "i")->ann);
    CHECK_EQ(ANN_VECTORIZE, axis("CC", "j")->ann);
    CHECK_EQ(ANN_PARALLEL, axis("C", "io")->ann);
    CHECK_EQ(ATTACH_INLINE, sch_find(mod.sched, "Bp")->attach);
    CHECK_EQ(4, axis("CC", "ki")->extent);
    CHECK_EQ(8, axis("C", "ii")->extent);
    CHECK_EQ(32, axis("C", "ji")->extent);
    Tensor *c = tensor("C");
    CHECK(c && c->is_output && c->pos.line == 12 && c->pos.col == 8);

    /* the cuda section */
    CHECK_EQ(0, parse(matmul_src, "cuda"));
    CHECK_EQ(1, mod.scheduled);
    CHECK_STR("f ii ji k", loops("C"));
    CHECK_STR("threadIdx.x", axis("C", "ii")->bind_tag);
    CHECK(sch_find(mod.sched, "BB") != NULL);
    CHECK_HAS(dump_program(), "  BB[ax0 < 512, ax1 < 1024] : f32 = B[ax0, ax1]\n");
    CHECK_EQ(16, sch_find(mod.sched, "Bp")->align_factor);
    CHECK_EQ(6, mod.schedule_lines.n);

    /* no section applied */
    CHECK_EQ(0, parse(matmul_src, NULL));
    CHECK_EQ(0, mod.scheduled);
    CHECK_EQ(0, mod.schedule_lines.n);
    CHECK_STR("i j k", loops("C"));
    CHECK_EQ(0, parse(matmul_src, "none"));
    CHECK_EQ(0, mod.scheduled);
    CHECK_EQ(0, parse(matmul_src, "metal"));
    CHECK_EQ(0, mod.scheduled);
    CHECK(mod.sched != NULL);

    /* -D overrides */
    Define defs[2] = {{"M", 100, 0}, {"K", 64, 0}};
    CHECK_EQ(0, parse_defs(matmul_src, NULL, defs, 2));
    CHECK_EQ(100, tensor("A")->shape[0]);
    CHECK_EQ(64, tensor("A")->shape[1]);
    CHECK_EQ(1, defs[0].used);
    CHECK_EQ(1, defs[1].used);
    Define twice[2] = {{"M", 8, 0}, {"M", 16, 0}};
    CHECK_EQ(0, parse_defs(matmul_src, NULL, twice, 2));
    CHECK_EQ(16, tensor("A")->shape[0]);   /* the last one wins */
}

static void test_params_and_literals(void)
{
    /* a comparison gives a bool: no arithmetic on it; the error is where the '*' is */
    FAILS("param K = 7\nparam R = (K > 3) * 1\n", 2, 19, "arithmetic '*' on bool operands");
    FAILS("param K = 7\nparam R = (K > 3) * 2\n", 2, 19, "integer literal 2 does not fit in bool (in '*')");

    CHECK_EQ(0, parse("param K = 7\n"
                      "param P = (K - 1) / 2\n"
                      "param Q = -P * 3 + 0x10 - (1 << 3) + (17 % 5) + min(4, 9) + max(-1, 2, 3)\n"
                      "param R = i32(K / 2.0)\n"
                      "input A : f32[P + 1, Q]\n"
                      "input B : f32[R]\n"
                      "output C[i < P + 1, j < Q] = A[i, j] * 2\n",
                      NULL));
    CHECK_EQ(4, tensor("A")->shape[0]);
    CHECK_EQ(-9 + 16 - 8 + 2 + 4 + 3, tensor("A")->shape[1]);
    CHECK_EQ(3, tensor("B")->shape[0]);
    CHECK_STR("program t\n"
              "  input A : f32[4, 8]\n"
              "  input B : f32[3]\n"
              "  output C[i < 4, j < 8] : f32 = (A[i, j] * 2.0)\n",
              dump_program());

    /* weak literals take the other side's type, exactly */
    CHECK_EQ(0, parse("input X : f64[4]\n"
                      "output Y[i < 4] = X[i] * 0.1 + 1\n"
                      "output Z[i < 4] = 0.5\n"
                      "output W[i < 4] = 1\n"
                      "output V[i < 4] = 3000000000\n"
                      "output U[i < 4] = 1.0 / 3 + 1\n"
                      "output S[i < 4] = u8(300) + 1\n"
                      "output R[i < 4] = 1e300\n",
                      NULL));
    Tensor *y = tensor("Y");
    CHECK_EQ(DT_F64, y->dtype);
    CHECK(y->body->kind == E_BIN && y->body->u.bin.a->kind == E_BIN &&
          y->body->u.bin.a->u.bin.b->kind == E_FLOAT && y->body->u.bin.a->u.bin.b->u.fval == 0.1);
    CHECK_EQ(DT_F32, tensor("Z")->dtype);
    CHECK_EQ(DT_I32, tensor("W")->dtype);
    CHECK_EQ(DT_I64, tensor("V")->dtype);
    CHECK_EQ(DT_F32, tensor("U")->dtype);
    CHECK_EQ(DT_U8, tensor("S")->dtype);
    CHECK_STR("program t\n"
              "  input X : f64[4]\n"
              "  output Y[i < 4] : f64 = ((X[i] * f64(0.10000000000000001)) + f64(1))\n"
              "  output Z[i < 4] : f32 = 0.5\n"
              "  output W[i < 4] : i32 = 1\n"
              "  output V[i < 4] : i64 = i64(3000000000)\n"
              "  output U[i < 4] : f32 = 1.33333337\n"
              "  output S[i < 4] : u8 = (u8(44) + u8(1))\n"
              "  output R[i < 4] : f64 = f64(1.0000000000000001e+300)\n",
              dump_program());
    /* a float literal alone defaults to f32, cast it for other types */
    CHECK_EQ(0, parse("output Y[i < 4] = f64(0.1) + inf - -inf\noutput N[i < 2] = isnan(nan)\n", NULL));
    CHECK_EQ(DT_F64, tensor("Y")->dtype);
    CHECK_EQ(DT_BOOL, tensor("N")->dtype);
}

static void test_expressions(void)
{
    CHECK_EQ(0, parse("param N = 16\n"
                      "input A : f32[N, N]\n"
                      "input I : i32[N]\n"
                      "input L : bool[N]\n"
                      "E[i < N, j < N] = exp(A[i, j]) + pow(A[i, j], 2) + fma(A[i, j], 2, 1) + abs(-A[i, j])\n"
                      "S[i < N, j < N] = i > j && L[i] || !(i == j) ? A[i, j] : -A[j, i]\n"
                      "T[i < N, j < N] = select(L[i], A[i, j], 0) + where(i < 3, 1, A[i, j])\n"
                      "B[i < N] = (I[i] << 2 >> 1) & 255 | 1 ^ ~I[i] % 7 - I[i] / 3\n"
                      "M[i < N] = max(j < N: A[i, j]) - min(j < N, k < 2: A[i, j] + f32(k)) + max(A[i, 0], A[0, i])\n"
                      "P[i < N] = prod(j < N: A[i, j]) / sum(j < N: A[i, j] * sum(k < N: A[k, j]))\n"
                      "F[i < N] = f32(i) * 0.5 + f32(I[i]) + sqrt(2) + f32(max(i < 3 ? 1 : 2, 5))\n"
                      "Q[i < N] = sigmoid(\n"
                      "    A[i,      # a wrapped access\n"
                      "      0]\n"
                      ")\n"
                      "output C[i < N, j < N] = E[i, j] + S[i, j] + T[i, j] + f32(B[i]) + M[i] + P[i] + F[i] + Q[i]\n",
                      "c"));
    CHECK_STR("program t\n"
              "  input A : f32[16, 16]\n"
              "  input I : i32[16]\n"
              "  input L : bool[16]\n"
              "  E[i < 16, j < 16] : f32 = (((exp(A[i, j]) + pow(A[i, j], 2.0)) + fma(A[i, j], 2.0, 1.0)) + abs(-A[i, j]))\n"
              "  S[i < 16, j < 16] : f32 = select((((i > j) && L[i]) || !(i == j)), A[i, j], -A[j, i])\n"
              "  T[i < 16, j < 16] : f32 = (select(L[i], A[i, j], 0.0) + select((i < 3), 1.0, A[i, j]))\n"
              "  B[i < 16] : i32 = ((((I[i] << 2) >> 1) & 255) | (1 ^ ((~I[i] % 7) - (I[i] / 3))))\n"
              "  M[i < 16] : f32 = ((max(j < 16: A[i, j]) - min(j < 16, k < 2: (A[i, j] + f32(k)))) + max(A[i, 0], A[0, i]))\n"
              "  P[i < 16] : f32 = (prod(j < 16: A[i, j]) / sum(j < 16: (A[i, j] * sum(k < 16: A[k, j]))))\n"
              "  F[i < 16] : f32 = ((((f32(i) * 0.5) + f32(I[i])) + sqrt(2.0)) + f32(max(select((i < 3), 1, 2), 5)))\n"
              "  Q[i < 16] : f32 = sigmoid(A[i, 0])\n"
              "  output C[i < 16, j < 16] : f32 = (((((((E[i, j] + S[i, j]) + T[i, j]) + f32(B[i])) + M[i]) + P[i]) + F[i]) + Q[i])\n",
              dump_program());
}

static void test_scan(void)
{
    const char *src = "param T = 8\n"
                      "param H = 4\n"
                      "input X : f32[T, H]\n"
                      "input U : f32[H, H]\n"
                      "input h0 : f32[H]\n"
                      "scan h[t < T, i < H]\n"
                      "    init = h0[i]\n"
                      "    update = tanh(X[t, i] + sum(j < H: U[i, j] * h[t - 1, j]))\n"
                      "output h\n"
                      "output scan f[t < T, i < H] : f64\n"
                      "  init(2) = 0\n"
                      "  update = f[t - 2, i] + f64(h[t, i]) * f[-1 + t, i]\n";
    CHECK_EQ(0, parse(src, NULL));
    Tensor *h = tensor("h"), *f = tensor("f");
    CHECK(h && h->kind == T_SCAN && h->is_output && h->init_steps == 1 && h->dtype == DT_F32);
    CHECK(f && f->kind == T_SCAN && f->is_output && f->init_steps == 2 && f->dtype == DT_F64);
    CHECK_STR("program t\n"
              "  input X : f32[8, 4]\n"
              "  input U : f32[4, 4]\n"
              "  input h0 : f32[4]\n"
              "  output scan h[t < 8, i < 4] : f32\n"
              "    init(1) = h0[i]\n"
              "    update = tanh((X[t, i] + sum(j < 4: (U[i, j] * h[(t - 1), j]))))\n"
              "  output scan f[t < 8, i < 4] : f64\n"
              "    init(2) = f64(0)\n"
              "    update = (f[(t - 2), i] + (f64(h[t, i]) * f[(-1 + t), i]))\n",
              dump_program());
    CHECK_EQ(0, parse("input X : f32[4]\nscan s[t < 4]\ninit = 0.0\nupdate = s[t - 1] + X[t]\noutput s\n", NULL));
    CHECK_EQ(DT_F32, tensor("s")->dtype);
}

static void test_syntax_conveniences(void)
{
    /* CRLF, tabs, a one-line section, a 3-axis fuse, comments inside a wrapped statement */
    CHECK_EQ(0, parse("input A : f32[8, 8, 8]\r\n"
                      "output\tC[i < 8, j < 8, k < 8] = A[i, j, k] + 1\r\n"
                      "schedule c { f = fuse(C, i, j, k) }\r\n"
                      "schedule wasm {\n"
                      "    io, ii = split(C,    # a comment\n"
                      "                   i, 2)\n"
                      "    parallel(C, io)\n"
                      "}\n",
                      "c"));
    CHECK_STR("f", loops("C"));
    CHECK_EQ(512, axis("C", "f")->extent);
    CHECK_EQ(0, parse("input A : f32[8, 8, 8]\n"
                      "output C[i < 8, j < 8, k < 8] = A[i, j, k] + 1\n"
                      "schedule c { f = fuse(C, i, j, k) }\n"
                      "schedule wasm {\n"
                      "    io, ii = split(C,    # a comment\n"
                      "                   i, 2)\n"
                      "    parallel(C, io)\n"
                      "}\n",
                      "wasm"));
    CHECK_STR("io ii j k", loops("C"));
    CHECK_EQ(2, mod.schedule_lines.n);
    CHECK_STR("io, ii = split(C, i, 2)", mod.schedule_lines.items[0]);
    /* a line ending with '=', an operator or ',' goes on with the next one */
    CHECK_EQ(0, parse("param P =\n    4\n"
                      "input A : f32[P]\n"
                      "output C[i < P] =\n"
                      "    A[i] * 2 +   # a comment\n"
                      "\n"
                      "    1\n"
                      "schedule c {\n"
                      "    io,\n"
                      "    ii = split(C, i, 2)\n"
                      "}\n",
                      "c"));
    CHECK_STR("program t\n  input A : f32[4]\n  output C[i < 4] : f32 = ((A[i] * 2.0) + 1.0)\n", dump_program());
    CHECK_STR("io, ii = split(C, i, 2)", mod.schedule_lines.items[0]);
    /* non-ASCII bytes are fine in comments; an empty schedule section is fine */
    CHECK_EQ(0, parse("# \xff\xfe caf\xc3\xa9\ninput A : f32[2] # \x01\noutput B[i < 2] = A[i]\nschedule c {\n}\n", "c"));
    CHECK_EQ(1, mod.scheduled);
    /* the file's stem names the program when there is no kernel line */
    CHECK_EQ(0, gen_parse_kg("dir/my_conv.kg", "input A : f32[2]\noutput B[i < 2] = A[i]\n", NULL, 0, NULL, &mod));
    CHECK_STR("my_conv", mod.prog->name);
    CHECK(mod.kernel_name == NULL);
    /* axes may reuse names across computes; a tensor may be named like a function */
    CHECK_EQ(0, parse("input exp : f32[2]\nsum[i < 2] = exp[i]\noutput max[i < 2] = exp(sum[i])\n", NULL));
    /* a cache_read copy with several readers, then compute_root */
    CHECK_EQ(0, sched_ok("    AA = cache_read(A, shared, C)\n    storage_align(AA, 0, 8, 1)"));
    CHECK(sch_find(mod.sched, "AA") && sch_find(mod.sched, "AA")->scope == SCOPE_SHARED);
    CHECK_EQ(8, sch_find(mod.sched, "AA") ? sch_find(mod.sched, "AA")->align_factor : 0);
    CHECK_EQ(0, sched_ok("    AA = cache_read(A, shared, C)\n    compute_root(AA)"));
    /* prefetch: B's next chunk of k, the columns taking turns by row */
    CHECK_EQ(0, sched_ok("    ko, ki = split(C, k, 8)\n    reorder(C, ko, i, ki, j)\n    prefetch(C, B, ko, i, j)"));
    CHECK(sch_find(mod.sched, "C") && sch_find(mod.sched, "C")->pf_tensor != NULL);
    CHECK_EQ(0, sched_ok("    ko, ki = split(C, k, 8)\n    prefetch(C, B, ko)"));
}

/* ---------------------------------------------------------------- the error corpus */

static void test_errors(void)
{
    /* names and dimensions */
    FAILS("input A : f32[4]\noutput C[i < 4] = Q[i]\n", 2, 19, "unknown tensor 'Q'");
    FAILS("input A : f32[4, 4]\noutput C[i < 4] = A[i, i, i]\n", 2, 19, "'A' has 2 dimensions, indexed with 3");
    FAILS("input A : f32[4, 4]\noutput C[i < 4] = A[i]\n", 2, 19, "'A' has 2 dimensions, indexed with 1");
    FAILS("input A : f32[4]\noutput C[i < 4] = A[i)\n", 2, 22, "expected ']' but found ')'");
    FAILS("input A : f32[4]\noutput C[i < 4] = A[i\noutput D[i < 4] = A[i]\n", 2, 20, "'[' is not closed");
    FAILS("param M = 4\nparam M = 5\n", 2, 7, "param 'M' defined twice (first at line 1)");
    FAILS("input A : f32[4]\ninput A : f32[4]\n", 2, 7, "tensor 'A' defined twice");
    FAILS("param A = 1\ninput A : f32[4]\n", 2, 7, "'A' is already a param");
    FAILS("input A : f32[4]\nparam A = 1\n", 2, 7, "'A' is already a tensor");
    FAILS("param N = 4\noutput C[N < 4] = 1\n", 2, 10, "axis 'N' has the name of a param");
    FAILS("output C[i < 4, i < 2] = 1\n", 1, 17, "axis 'i' defined twice");
    FAILS("input scan : f32[4]\n", 1, 7, "'scan' is a reserved word");
    FAILS("output C[i < 4] = i + k\n", 1, 23, "unknown name 'k'");
    FAILS("input A : f32[4]\noutput C[i < 4] = sum(k < 4: A[k]) + k\n", 2, 38, "unknown name 'k'");
    FAILS("input A : f32[4]\noutput C[i < 4] = A\n", 2, 19, "'A' is a tensor; index it as A[...]");
    FAILS("param M = 2\noutput C[i < 4] = M[i]\n", 2, 19, "'M' is a param, not a tensor");
    FAILS("output C[i < 4] = i[0]\n", 1, 19, "'i' is an axis, not a tensor");
    FAILS("output C[i < 4] = C[i]\n", 1, 19, "'C' cannot read itself");
    FAILS("output C[i < 4] = foo(i)\n", 1, 19, "unknown function 'foo'");
    FAILS("input A : f32[4]\noutput C[i < 4] = A(i)\n", 2, 19, "'A' is a tensor; index it with [...]");
    FAILS("output C[i < 4] = sum(i < 4: 1)\n", 1, 23, "axis 'i' is already defined here");
    FAILS("output C[i < 4] = sum(k < 4, k < 2: 1)\n", 1, 30, "reduction axis 'k' defined twice");

    /* types */
    FAILS("input A : f32[4]\noutput C[i < 4] = i * A[i]\n", 2, 21, "type mismatch in '*': i32 and f32");
    FAILS("output C[i < 4] = i * 0.5\n", 1, 21, "type mismatch in '*': i32 and the float literal 0.5");
    FAILS("input A : u8[4]\noutput C[i < 4] = A[i] + 300\n", 2, 24, "integer literal 300 does not fit in u8");
    FAILS("input A : f32[4]\noutput C[i < 4] = A[i] * 1e300\n", 2, 24, "float literal 1e+300 does not fit in f32");
    FAILS("input A : f16[4]\noutput C[i < 4] = A[i] * 70000\n", 2, 24, "integer literal 70000 does not fit in f16");
    FAILS("input A : f32[4]\noutput C[i < 4] = A[0.5]\n", 2, 21, "index 0 of 'A' must be an integer, got f32");
    FAILS("input A : f32[4]\noutput C[i < 4] = A[i] ? 1 : 2\n", 2, 19, "the condition of '?:' must be bool, got f32");
    FAILS("input A : f32[4]\ninput B : f64[4]\noutput C[i < 4] = i < 2 ? A[i] : B[i]\n", 3, 25,
          "the two sides of '?:' have different types: f32 and f64");
    FAILS("input A : f32[4]\noutput C[i < 4] = select(i, A[i], 0)\n", 2, 26, "the condition of select must be bool");
    FAILS("output C[i < 4] = where(i < 2, 1)\n", 1, 19, "where() takes 3 arguments");
    FAILS("output C[i < 4] = f32(i, i)\n", 1, 19, "f32() takes 1 argument, got 2");
    FAILS("output C[i < 4] = max(i)\n", 1, 19, "max() takes 2 or more arguments");
    FAILS("output C[i < 4] = exp(i)\n", 1, 19, "exp() needs a float argument, got i32");
    FAILS("output C[i < 4] = exp(1.0, 2.0)\n", 1, 19, "exp() takes 1 argument, got 2");
    FAILS("output C[i < 4] = !i\n", 1, 19, "'!' needs a bool operand, got i32");
    FAILS("output C[i < 4] = 1.5 & 1\n", 1, 23, "'&' needs integer operands, got f32");
    FAILS("output C[i < 4] = i && i\n", 1, 21, "'&&' needs bool operands");

    /* constant expressions */
    FAILS("param P = 4 / (2 - 2)\n", 1, 13, "division by zero in constant expression");
    FAILS("param P = 4 % 0\n", 1, 13, "division by zero in constant expression");
    FAILS("param P = 4611686018427387904 * 4\n", 1, 31, "integer overflow in constant expression");
    FAILS("param P = 9223372036854775807 + 1\n", 1, 31, "integer overflow in constant expression");
    FAILS("param P = 1 << 64\n", 1, 13, "shift count 64 out of range");
    FAILS("param P = 99999999999999999999\n", 1, 11, "integer literal '99999999999999999999' is too large");
    FAILS("param P = 1e999\n", 1, 11, "float literal '1e999' is out of range");
    /* integer casts in constants wrap like C */
    CHECK_EQ(0, parse("param P = u8(300) - i8(200) + 20\noutput C[i < P] = i\n", NULL));
    CHECK_EQ(44 + 56 + 20, tensor("C") ? tensor("C")->shape[0] : 0);
    FAILS("param P = 2.5\n", 1, 11, "expected an integer constant expression (params and literals), got a float");
    FAILS("param P = Q + 1\n", 1, 11, "unknown param 'Q'");
    FAILS("input A : f32[4]\nparam P = A[0]\n", 2, 11, "a constant expression may not read tensors");
    FAILS("param P = sum(k < 4: k)\n", 1, 11, "a constant expression may not contain a reduction");
    FAILS("output C[i < 4] = sum(k < i: 1)\n", 1, 27, "'i' is an axis, but a constant expression may use only params");
    FAILS("output C[i < 0] = 1\n", 1, 14, "the extent of 'i' must be >= 1, got 0");
    FAILS("output C[i < 3000000000] = 1\n", 1, 14, "the extent of 'i' is too large");
    FAILS("input A : f32[65536, 65536]\n", 1, 7, "'A' is too large");
    FAILS("input A : f32[4, 0]\n", 1, 18, "dimension 1 of 'A' must be between 1 and");
    FAILS("input A : f32[1,1,1,1,1,1,1,1,1]\n", 1, 31, "too many dimensions (the limit is 8)");
    FAILS("input A : f33[4]\n", 1, 11, "expected a dtype (bool, i8");
    FAILS("input A f32[4]\n", 1, 9, "expected ':' and the input's type");
    FAILS("input A : f32\n", 1, 14, "expected '[' and the shape after the dtype");

    /* scans */
    FAILS("scan h[t < 4]\ninit = 0.0\nupdate = h[t] + 1\noutput h\n", 3, 12,
          "scan update may read 'h' only at earlier time steps");
    FAILS("scan h[t < 4, i < 2]\ninit = 0.0\nupdate = h[t - 1, i] + h[t + 1, i]\noutput h\n", 3, 26,
          "scan update may read 'h' only at earlier time steps");
    FAILS("scan h[t < 4]\ninit = h[0]\nupdate = h[t - 1]\n", 2, 8, "scan init may not read 'h'");
    FAILS("scan h[t < 4]\ninit = 0.0\noutput h\n", 3, 1, "expected 'update = ...'");
    FAILS("scan h[t < 4]\nupdate = 1.0\n", 2, 1, "expected 'init = ...'");
    FAILS("scan h[t < 4]\ninit(5) = 0.0\nupdate = h[t - 1]\n", 2, 6, "init steps must be between 1 and the time extent 4");
    FAILS("scan h[t < 4] : f64\ninit = f32(0)\nupdate = h[t - 1]\n", 2, 8, "the scan's init has type f32 but the scan is f64");
    FAILS("scan h[t < 4]\ninit = 0.0\nupdate = f64(h[t - 1])\n", 3, 10, "the scan's update has type f64 but its init has type f32");
    FAILS("init = 0\n", 1, 1, "'init' outside a scan");

    /* statements */
    FAILS("output C[i < 4] = 1 2\n", 1, 21, "expected end of line but found '2'");
    FAILS("output C[i < 4] = 1 +\n", 1, 22, "expected an expression but found end of file");
    FAILS("output C[i < 4] = (1 + 2) 3\n", 1, 27, "expected end of line but found '3'");
    FAILS("input A : f32[4]\noutput C[i < 4] = A[i]\n  + 1\n", 3, 3, "expected a statement");
    FAILS("C = 1\n", 1, 3, "a compute needs its axes");
    FAILS("C[i] = 1\n", 1, 4, "expected '<' and the extent after axis 'i' but found ']'");
    FAILS("42\n", 1, 1, "expected a statement");
    FAILS("kernel a\nkernel b\n", 2, 8, "the kernel's name is already set (line 1)");
    FAILS("input A : f32[4]\noutput A\n", 2, 8, "'A' is an input; only computed tensors can be outputs");
    FAILS("output C[i < 4] = 1\noutput C\n", 2, 8, "'C' is already an output");
    FAILS("output Q\n", 1, 8, "unknown tensor 'Q'");
    FAILS("input A : f32[4]\nB[i < 4] = A[i]\n", 0, 0, "no output: mark a computed tensor with 'output'");
    FAILS("", 0, 0, "no output");
    FAILS("# only a comment\n", 0, 0, "no output");
    FAILS("input A : f32[4]\noutput C[i < 4] = A[i + 1]\n", 2, 8, "index 0 of 'A' ranges over 1..4, outside 0..3");
    FAILS("input A : f32[4]\nB[i < 4] = A[i]\nD[i < 4] = B[i]\ninput E : f32[2]\nF[i < 4] = B[3 - i] + D[i + 1]\n"
          "output G[i < 4] = F[i]\n", 5, 1, "index 0 of 'D' ranges over 1..4, outside 0..3");

    /* -D */
    Define d[2] = {{"M", 1, 0}, {"X", 5, 0}};
    fails_at(__LINE__, "param M = 4\noutput C[i < M] = 1\n", "c", d, 2, 0, 0, "-DX=5 does not match any param");

    /* lexical */
    FAILS("output C[i < 4] = 1 // a comment\n", 1, 21, "'//' is not an operator or a comment here");
    FAILS("output C[i < 4] = 1 @ 2\n", 1, 21, "unexpected character '@'");
    FAILS("output C[i < 4] = \xff\n", 1, 19, "unexpected byte 0xff");
    FAILS("output C[i < 4] = \x01\n", 1, 19, "unexpected control character 0x01");
    FAILS("output C[i < 4] = 2i\n", 1, 19, "invalid number '2i'");
    FAILS("output C[i < 4] = 1.5.5\n", 1, 19, "invalid number '1.5.5'");

    /* schedules */
    SCHED_FAILS("    foo(C, i)", 5, 5, "unknown schedule primitive 'foo'");
    SCHED_FAILS("    unroll(Q, i)", 5, 12, "unknown tensor 'Q' (stages: A, B, C)");
    SCHED_FAILS("    io, jo, ii, ji = tile(C, i, j, 8, 32)\n    unroll(C, x)", 6, 15,
                "unknown axis 'x' in stage C (axes: io, jo, ii, ji, k)");
    SCHED_FAILS("    xo, xi = split(C, i)", 5, 24, "split takes 3 arguments, got 2 (usage: xo, xi = split(stage, axis, factor))");
    SCHED_FAILS("    xo, xi = split(C, i, 2, 3)", 5, 29, "too many arguments to split");
    SCHED_FAILS("    xo = split(C, i, 2)", 5, 5, "split returns 2 names; write: xo, xi = split(stage, axis, factor)");
    SCHED_FAILS("    split(C, i, 2)", 5, 5, "split returns 2 names");
    SCHED_FAILS("    x = reorder(C, j, i)", 5, 5, "reorder returns nothing");
    SCHED_FAILS("    xo, xi = split(C, i, 0)", 5, 26, "split factor must be >= 1, got 0");
    SCHED_FAILS("    xo, xi = split(C, i, M)", 5, 26, "unknown param 'M'");
    SCHED_FAILS("    j, xi = split(C, i, 2)", 5, 5, "axis 'j' already exists in stage C");
    SCHED_FAILS("    a, a = split(C, i, 2)", 5, 8, "'a' appears twice on the left");
    SCHED_FAILS("    CC = cache_write(C, register)", 5, 25, "unknown memory scope 'register'");
    SCHED_FAILS("    A = cache_write(C, local)", 5, 5, "'A' already names a stage");
    SCHED_FAILS("    vectorize(C, k)", 5, 5, "vectorize: k is a reduce axis of C");
    SCHED_FAILS("    bind(C, i, blockIdx.w)", 5, 5, "bind: unknown thread tag 'blockIdx.w'");
    SCHED_FAILS("    parallel(C, k)", 5, 5, "parallel: k is a reduce axis of C");
    SCHED_FAILS("    compute_at(C, C, i)", 5, 5, "compute_at: C is an output");
    SCHED_FAILS("    storage_align(C, 9, 16, 1)", 5, 22, "storage_align dimension must be between 0 and 7");
    SCHED_FAILS("    AA = cache_read(A, local)", 5, 29, "cache_read takes at least 3 arguments");
    SCHED_FAILS("    prefetch(C, B, i)", 5, 5, "prefetch: i is not a reduce axis of C");
    SCHED_FAILS("    prefetch(C, Q, k)", 5, 17, "unknown tensor 'Q'");
    SCHED_FAILS("    prefetch(C, B, k, i, j, i)", 5, 29, "too many arguments to prefetch");
    SCHED_FAILS("    AA = cache_read(A, local, B)", 5, 10, "cache_read: B does not read A");
    SCHED_FAILS("    unroll(C, i) unroll(C, j)", 5, 18, "expected end of line but found 'unroll'");
    SCHED_FAILS("    unroll(C, 3)", 5, 15, "expected an axis name but found '3'");
    SCHED_FAILS("    bind(C, i, blockIdx.)", 5, 25, "expected a name after '.' in a thread tag");
    FAILS(SCHED_BASE "schedule c {\n    unroll(C, i)\n", 4, 12, "schedule section 'c' is not closed");
    FAILS(SCHED_BASE "schedule c {\n}\nschedule c {\n}\n", 6, 10, "schedule section 'c' defined twice (first at line 4)");
    FAILS(SCHED_BASE "schedule c\n(\n", 5, 1, "expected '{' after 'schedule c' but found '('");
    /* sections for other targets are checked too, without being applied */
    FAILS(SCHED_BASE "schedule cuda {\n    bind(C, x, blockIdx.x)\n}\n", 5, 13, "unknown axis 'x' in stage C (axes: i, j, k)");
    FAILS(SCHED_BASE "schedule cuda {\n    unroll(D, i)\n}\n", 5, 12, "unknown tensor 'D' (stages: A, B, C)");
    FAILS(SCHED_BASE "schedule cuda {\n    io, ii = split(C, i, 4)\n    unroll(C, iii)\n}\n", 6, 15,
          "unknown axis 'iii' in stage C (axes: i, j, k, io, ii)");
    FAILS(SCHED_BASE "schedule cuda {\n    X = cache_read(A, texture, C)\n}\n", 5, 23, "unknown memory scope 'texture'");
    FAILS_T(SCHED_BASE "schedule c {\n    unroll(D, i)\n}\n", NULL, 5, 12, "unknown tensor 'D'");
}

/* The exact shape of a message: position, source line, caret under the token. */
static void test_message_format(void)
{
    parse("input A : f32[4]\n\toutput C[i < 4] = Q[i] # x\n", "c");
    CHECK_STR("t.kg:2:20: error: unknown tensor 'Q'\n"
              "\toutput C[i < 4] = Q[i] # x\n"
              "\t                  ^",
              ir_errmsg());
    /* a UTF-8 character before the error counts as one column of the caret line */
    parse("input A : f32[4] # \xc3\xa9\xc3\xa9 \xff\noutput C[i < 4] = A[i] $\n", "c");
    CHECK_STR("t.kg:2:24: error: unexpected character '$'\n"
              "output C[i < 4] = A[i] $\n"
              "                       ^",
              ir_errmsg());
    parse("param X = 1 # caf\xc3\xa9 \xff\x01\nparam X = 2\n", "c");
    CHECK_HAS(ir_errmsg(), "t.kg:2:7: error: param 'X' defined twice");
    parse("output C[i < 4] = 1 + # caf\xc3\xa9 \xff\n", "c");
    CHECK_STR("t.kg:1:22: error: expected an expression but found end of file\n"
              "output C[i < 4] = 1 + # caf\xc3\xa9 ?\n"
              "                     ^",
              ir_errmsg());
    /* an error at the end of the file points just after the last token */
    parse("output C[i < 4] = (1 +\n\n\n", "c");
    CHECK_HAS(ir_errmsg(), "t.kg:1:23: error: expected an expression but found end of file");
}

/* ---------------------------------------------------------------- robustness */

static char *repeat(const char *head, const char *unit, int n, const char *tail)
{
    size_t hl = strlen(head), ul = strlen(unit), tl = strlen(tail);
    char *s = malloc(hl + ul * (size_t)n + tl + 1);
    memcpy(s, head, hl);
    for (int i = 0; i < n; i++)
        memcpy(s + hl + ul * (size_t)i, unit, ul);
    memcpy(s + hl + ul * (size_t)n, tail, tl + 1);
    return s;
}

static void test_limits(void)
{
    /* 256 nested parentheses: a clear error, not a stack overflow */
    char *open = repeat("output C[i < 4] = ", "(", 256, "1");
    char *src = repeat(open, ")", 256, "\n");
    FAILS(src, 1, 19 + 200, "expression nested too deeply (the limit is 200 levels)");
    free(open);
    free(src);
    /* 150 are fine */
    open = repeat("output C[i < 4] = ", "(", 150, "i");
    src = repeat(open, ")", 150, "\n");
    CHECK_EQ(0, parse(src, NULL));
    free(open);
    free(src);
    /* 100000 unary minus signs */
    src = repeat("output C[i < 4] = ", "-", 100000, "1\n");
    FAILS(src, 1, 19 + 200, "nested too deeply");
    free(src);
    /* a long flat chain builds a deep tree: bounded too */
    src = repeat("output C[i < 4] = i", " + i", 5000, "\n");
    FAILS(src, 1, 4017, "expression too deep (more than 1000 nested operations)");
    free(src);
    /* literals fold: a long chain of them is one constant */
    src = repeat("param P = 0", " + 1", 100000, "\noutput C[i < P] = i\n");
    CHECK_EQ(0, parse(src, NULL));
    CHECK_EQ(100000, tensor("C")->shape[0]);
    free(src);
    /* an extremely long line: the excerpt is a window around the column */
    src = repeat("output C[i < 4] = 1", " + 1", 200000, " + Q[i]\n");
    parse(src, NULL);
    const char *e = ir_errmsg();
    CHECK_HAS(e, "t.kg:1:800023: error: unknown tensor 'Q'\n...");
    CHECK(strlen(e) < 600);
    /* the caret line's '^' stands under the Q of the excerpt */
    const char *src_line = strchr(e, '\n'), *caret_line = strrchr(e, '\n');
    CHECK(src_line && caret_line && caret_line > src_line);
    if (src_line && caret_line && caret_line > src_line) {
        size_t col = strlen(caret_line + 1) - 1;
        CHECK_EQ('^', caret_line[1 + col]);
        CHECK_EQ('Q', src_line[1 + col]);
    }
    free(src);
    /* an extremely long token */
    src = repeat("output C[i < 4] = ", "x", 1000000, "\n");
    FAILS(src, 1, 19, "name too long (more than 255 characters)");
    free(src);
    src = repeat("param P = ", "9", 300, "\n");
    FAILS(src, 1, 11, "number too long");
    free(src);
    /* a name of 255 characters is fine */
    src = repeat("output ", "c", 255, "[i < 2] = 1\n");
    CHECK_EQ(0, parse(src, NULL));
    free(src);
    /* splitting the innermost loop over and over: the loop limit, not an abort */
    StrBuf sp = {0};
    sb_puts(&sp, "input A : f32[64]\noutput C[i < 64] = A[i]\nschedule c {\n");
    for (int i = 1; i <= 70; i++) {
        char parent[16];
        snprintf(parent, sizeof parent, i == 1 ? "i" : "i%d", i - 1);
        sb_printf(&sp, "    o%d, i%d = split(C, %s, 1)\n", i, i, parent);
    }
    sb_puts(&sp, "}\n");
    parse(sp.data, "c");
    CHECK_HAS(ir_errmsg(), ": error: ");
    CHECK(strstr(ir_errmsg(), "too many loops in stage C (the limit is 64)") ||
          strstr(ir_errmsg(), "too many splits and fuses on C"));
    sb_free(&sp);
    /* many lines and many tensors */
    StrBuf b = {0};
    sb_puts(&b, "input T0 : f32[4]\n");
    for (int i = 1; i < 2000; i++)
        sb_printf(&b, "T%d[i < 4] = T%d[i] + %d\n", i, i - 1, i);
    sb_puts(&b, "output T1999\n");
    CHECK_EQ(0, parse(b.data, NULL));
    CHECK_EQ(2000, mod.prog->tensors.n);
    sb_free(&b);
}

/* Random byte edits of valid sources must parse or fail with a message, never crash. */
static uint64_t rng = 0x9e3779b97f4a7c15u;
static unsigned rnd(unsigned n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng % n);
}

static void test_mutations(void)
{
    static const char *seeds[] = {
        NULL,   /* matmul_src */
        "param T = 8\nparam H = 4\ninput X : f32[T, H]\ninput U : f32[H, H]\ninput h0 : f32[H]\n"
        "scan h[t < T, i < H]\n  init = h0[i]\n  update = tanh(X[t, i] + sum(j < H: U[i, j] * h[t - 1, j]))\n"
        "output h\nschedule c {\n  io, ii = split(h, i, 2)\n}\n",
        "input A : f32[8, 8]\nE[i < 8, j < 8] = i > j ? exp(A[i, j]) : select(i == j, 1.0, -A[j, i])\n"
        "output C[i < 8] = max(j < 8: E[i, j]) + min(E[i, 0], 2) + f32(i % 3 << 1)\n"
        "schedule c {\n  compute_inline(E)\n  vectorize(C, i)\n}\n",
    };
    static const char alphabet[] = "()[]{},:?=+-*/%<>&|!~.#\n 0123456789.eE_xijkCAB\xff\t\r";
    int crashed = 0, ok = 0, errors = 0;
    for (int round = 0; round < 6000; round++) {
        const char *seed = seeds[round % 3] ? seeds[round % 3] : matmul_src;
        size_t n = strlen(seed);
        char *s = malloc(n + 64);
        memcpy(s, seed, n + 1);
        int edits = 1 + (int)rnd(4);
        for (int k = 0; k < edits; k++) {
            size_t at = rnd((unsigned)n);
            switch (rnd(4)) {
            case 0: s[at] = alphabet[rnd(sizeof alphabet - 1)]; break;            /* replace */
            case 1: memmove(s + at, s + at + 1, n - at); n--; break;              /* delete */
            case 2:                                                               /* insert */
                memmove(s + at + 1, s + at, n - at + 1);
                s[at] = alphabet[rnd(sizeof alphabet - 1)];
                n++;
                break;
            default: s[at] = 0; n = at; break;                                    /* truncate */
            }
            if (n == 0)
                break;
        }
        int rc = parse(s, round % 2 ? "c" : "cuda");
        if (rc == 0 && mod.prog && mod.sched)
            ok++;
        else if (rc == -1 && !strncmp(ir_errmsg(), "t.kg:", 5) && strstr(ir_errmsg(), "error: "))
            errors++;
        else {
            crashed++;
            fprintf(stderr, "mutation %d: rc %d, message:\n%s\nsource:\n%s\n", round, rc, ir_errmsg(), s);
        }
        free(s);
    }
    CHECK_EQ(0, crashed);
    CHECK(ok > 50 && errors > 1000);
}

int main(void)
{
    Arena *a = ir_arena_new();
    ir_arena_set(a);
    test_matmul();
    test_params_and_literals();
    test_expressions();
    test_scan();
    test_syntax_conveniences();
    test_errors();
    test_message_format();
    test_limits();
    test_mutations();
    ir_arena_free(a);
    return test_done("kg");
}
