/* test_launch.c - the gpu-launch pass (lower/launch.c) and the printer core (emit/printer.c).
 *
 * Kernels are built by hand with the ir_* constructors: the plan's launches, grids, shared
 * bytes and workspace list are checked against the numbers the kernels were built with,
 * each refusal against its message, the --dump=gpu-launch text against the plan; then the
 * printer core's identifiers, unique names, comment text and float digits. A launch over a
 * run-time extent keeps its grid as an Expr of the dims. */
#define _POSIX_C_SOURCE 200809L

#include "../../lower/launch.h"
#include "../../emit/printer.h"
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int64_t s16[1] = {16}, s256[1] = {256};

static Kernel *kernel(const char *name, Buffer *param, Stmt *body)
{
    Kernel *k = ir_alloc(sizeof *k);
    k->name = name;
    ir_vec_push(&k->params, param, 64, "parameters");
    k->body = body;
    return k;
}

/* for (v in 0..n) bound to tag */
static Stmt *bound(const char *var, const char *tag, int64_t n, Stmt *body, Var **out)
{
    Var *v = ir_var_new(var, DT_I32);
    Stmt *s = ir_for(v, ir_int(0, DT_I32), ir_int(n, DT_I32), FOR_BOUND, body);
    s->u.loop.bind_tag = tag;
    if (out)
        *out = v;
    return s;
}

static const LowerLaunchLimits limits = {.lang = "cuda", .max_threads = 1024, .max_shared = 48 << 10};

static void test_slots(void)
{
    CHECK_EQ(0, lower_launch_slot("blockIdx.x"));
    CHECK_EQ(2, lower_launch_slot("blockIdx.z"));
    CHECK_EQ(4, lower_launch_slot("threadIdx.y"));
    CHECK_EQ(-1, lower_launch_slot("blockIdx.w"));
    CHECK_EQ(-1, lower_launch_slot("threadIdx.xx"));
    CHECK_EQ(-1, lower_launch_slot("vthread"));
    CHECK_EQ(-1, lower_launch_slot(NULL));
    CHECK_STR("gpu-launch", lower_launch_pass()->name);
}

/* Y[b * 32 + t] = 1 over a 4 x 32 grid; a comment; then a shared tile and a barrier on 64
 * threads; all under a workspace buffer. */
static void test_plan(void)
{
    Buffer *Y = ir_buffer_new("Y", DT_F32, 1, s256, SCOPE_PARAM);
    Buffer *ws = ir_buffer_new("T", DT_F32, 1, s256, SCOPE_WORKSPACE);
    Buffer *tile = ir_buffer_new("tile", DT_F32, 1, s16, SCOPE_SHARED);
    Var *b, *t, *u;
    Stmt *st = ir_store(Y, ir_int(0, DT_I32), ir_float(1, DT_F32));
    Stmt *first = bound("b", "blockIdx.x", 4, bound("t", "threadIdx.x", 32, st, &t), &b);
    Stmt *inner[2] = {ir_store(tile, ir_int(0, DT_I32), ir_float(2, DT_F32)), ir_barrier()};
    Stmt *second = bound("u", "threadIdx.x", 64, ir_allocate(tile, ir_seq(inner, 2)), &u);
    Stmt *items[3] = {first, ir_comment("then"), second};
    Kernel *k = kernel("two", Y, ir_allocate(ws, ir_seq(items, 3)));

    char *dump = NULL;
    size_t dlen = 0;
    FILE *f = open_memstream(&dump, &dlen);
    ir_pass_dump_set("gpu-launch", f);
    LowerLaunchPlan plan;
    CHECK_EQ(0, lower_launch_plan(k, &limits, &plan));
    ir_pass_dump_set(NULL, NULL);
    fclose(f);
    CHECK_EQ(2, plan.n);
    CHECK_EQ(1, plan.workspace.n);
    CHECK(plan.workspace.n == 1 && plan.workspace.items[0] == ws);
    CHECK(plan.items[0].body == first);
    CHECK(plan.items[1].body == second);
    CHECK_EQ(4, plan.items[0].ext[0]);
    CHECK_EQ(1, plan.items[0].ext[1]);
    CHECK_EQ(32, plan.items[0].ext[3]);
    CHECK_EQ(0, plan.items[0].shared_bytes);
    CHECK_EQ(1, plan.items[1].ext[0]);
    CHECK_EQ(64, plan.items[1].ext[3]);
    CHECK_EQ(16 * 4, plan.items[1].shared_bytes);
    CHECK_HAS(dump, "kernel two: 2 launches");
    CHECK_HAS(dump, "launch 0: grid 4 x 1 x 1, block 32 x 1 x 1, 0 shared bytes");
    CHECK_HAS(dump, "launch 1: grid 1 x 1 x 1, block 64 x 1 x 1, 64 shared bytes");
    free(dump);
    lower_launch_free(&plan);

    /* with too few threads allowed, or too little shared memory, the same kernel is refused */
    LowerLaunchLimits small = limits;
    small.max_threads = 32;
    CHECK_EQ(-1, lower_launch_plan(k, &small, &plan));
    CHECK_HAS(ir_errmsg(), "64 threads per block, above the target's limit of 32");
    lower_launch_free(&plan);
    small = limits;
    small.max_shared = 32;
    CHECK_EQ(-1, lower_launch_plan(k, &small, &plan));
    CHECK_HAS(ir_errmsg(), "64 bytes of shared memory per block");
    lower_launch_free(&plan);
}

static void test_refusals(void)
{
    Buffer *Y = ir_buffer_new("Y", DT_F32, 1, s256, SCOPE_PARAM);
    Buffer *D = ir_buffer_new("D", DT_F64, 1, s256, SCOPE_PARAM);
    LowerLaunchPlan plan;

    /* a barrier inside the guard of a loop shorter than the block (one launch: one nest) */
    Stmt *both[2] = {bound("a", "threadIdx.x", 64, ir_store(Y, ir_int(0, DT_I32), ir_float(0, DT_F32)), NULL),
                     bound("c", "threadIdx.x", 16, ir_barrier(), NULL)};
    Stmt *nest = ir_for(ir_var_new("n", DT_I32), ir_int(0, DT_I32), ir_int(1, DT_I32), FOR_SERIAL, ir_seq(both, 2));
    CHECK_EQ(-1, lower_launch_plan(kernel("guard", Y, nest), &limits, &plan));
    CHECK_HAS(ir_errmsg(), "a barrier under divergent control flow (inside the guard of c)");
    lower_launch_free(&plan);

    /* bound to something else */
    Stmt *odd = bound("v", "vthread", 4, ir_store(Y, ir_int(0, DT_I32), ir_float(0, DT_F32)), NULL);
    CHECK_EQ(-1, lower_launch_plan(kernel("odd", Y, odd), &limits, &plan));
    CHECK_HAS(ir_errmsg(), "is bound to 'vthread', not a GPU index");
    lower_launch_free(&plan);

    /* doubles where the language has none, and only there */
    Stmt *f64 = bound("w", "threadIdx.x", 8, ir_store(D, ir_int(0, DT_I32), ir_float(0, DT_F64)), NULL);
    LowerLaunchLimits metal = limits;
    metal.lang = "metal";
    metal.no_f64 = 1;
    CHECK_EQ(0, lower_launch_plan(kernel("dbl", D, f64), &limits, &plan));
    lower_launch_free(&plan);
    CHECK_EQ(-1, lower_launch_plan(kernel("dbl", D, f64), &metal, &plan));
    CHECK_HAS(ir_errmsg(), "metal has no 64-bit floats");
    lower_launch_free(&plan);

    /* a grid beyond what GPUs launch */
    Stmt *tall = bound("y", "blockIdx.y", 70000, ir_store(Y, ir_int(0, DT_I32), ir_float(0, DT_F32)), NULL);
    CHECK_EQ(-1, lower_launch_plan(kernel("tall", Y, tall), &limits, &plan));
    CHECK_HAS(ir_errmsg(), "a grid of 1 x 70000 x 1 blocks");
    lower_launch_free(&plan);
}

static int taken_below_3(void *ctx, const char *s)
{
    (void)ctx;
    return !strcmp(s, "x") || !strcmp(s, "x_1") || !strcmp(s, "x_2");
}

/* A block index bound over a run-time extent (a dim H in 1..100): the grid is (H + 31) / 32
 * at run time, its bound's value (4) checked against the limits; the loop over it needs no
 * guard, a thread loop or a loop of another extent does; a block loop over a thread-
 * variable extent is refused. */
static void test_runtime_grid(void)
{
    Program *p = ir_program_new("dyn");
    IrDim *d = ir_program_add_dim(p, "H", 1, 100, 0, 0);
    Expr *ext = ir_bin(OP_FLOORDIV, ir_add(ir_varref(d->var), ir_idx(31)), ir_idx(32));
    Buffer *Y = ir_buffer_new("Y", DT_F32, 1, s256, SCOPE_PARAM);
    Var *b = ir_var_new("b", DT_I32), *t;
    Stmt *loop = ir_for(b, ir_int(0, DT_I32), ext, FOR_BOUND,
                        bound("t", "threadIdx.x", 32, ir_store(Y, ir_int(0, DT_I32), ir_float(1, DT_F32)), &t));
    loop->u.loop.bind_tag = "blockIdx.x";
    LowerLaunchPlan plan;
    CHECK_EQ(0, lower_launch_plan(kernel("dyn", Y, loop), &limits, &plan));
    CHECK_EQ(1, plan.n);
    if (plan.n == 1) {
        const LowerLaunch *l = &plan.items[0];
        CHECK_EQ(4, l->ext[0]);
        CHECK_EQ(32, l->ext[3]);
        CHECK(l->dext[0] && ir_expr_equal(l->dext[0], ext));
        CHECK(!l->dext[1] && !l->dext[2]);
        CHECK_EQ(0, lower_launch_guarded(l, 0, ext));
        CHECK_EQ(1, lower_launch_guarded(l, 0, ir_idx(2)));
        CHECK_EQ(0, lower_launch_guarded(l, 3, ir_idx(32)));
        CHECK_EQ(1, lower_launch_guarded(l, 3, ir_idx(16)));
    }
    lower_launch_free(&plan);
    /* a block count that reaches 0 (H - 1 at H = 1) runs one block: guarded */
    Expr *ext0 = ir_bin(OP_SUB, ir_varref(d->var), ir_idx(1));
    Stmt *loop0 = ir_for(ir_var_new("b", DT_I32), ir_int(0, DT_I32), ext0, FOR_BOUND,
                         ir_store(Y, ir_int(0, DT_I32), ir_float(1, DT_F32)));
    loop0->u.loop.bind_tag = "blockIdx.y";
    CHECK_EQ(0, lower_launch_plan(kernel("dyn0", Y, loop0), &limits, &plan));
    if (plan.n == 1) {
        CHECK_EQ(99, plan.items[0].ext[1]);
        CHECK_EQ(1, lower_launch_guarded(&plan.items[0], 1, ext0));
    }
    lower_launch_free(&plan);
    /* run-time threads are not a launch: refused */
    Stmt *tl = ir_for(ir_var_new("t", DT_I32), ir_int(0, DT_I32), ext, FOR_BOUND,
                      ir_store(Y, ir_int(0, DT_I32), ir_float(1, DT_F32)));
    tl->u.loop.bind_tag = "threadIdx.x";
    CHECK_EQ(-1, lower_launch_plan(kernel("dynt", Y, tl), &limits, &plan));
    CHECK_HAS(ir_errmsg(), "a run-time extent only where a block index is bound");
    lower_launch_free(&plan);
}

static void test_printer_core(void)
{
    char *s = em_ident_base("i.outer", "v", 1);
    CHECK_STR("i_outer", s);
    free(s);
    s = em_ident_base("3d", "v", 1);
    CHECK_STR("v_3d", s);
    free(s);
    s = em_ident_base("_X", "v", 1);
    CHECK_STR("v_X", s);
    free(s);
    s = em_ident_base("_X", "v", 0);
    CHECK_STR("_X", s);
    free(s);
    s = em_ident_base("", "v_", 0);
    CHECK_STR("v_", s);
    free(s);
    s = em_unique_name("x", taken_below_3, NULL);
    CHECK_STR("x_3", s);
    free(s);
    s = em_unique_name("y", taken_below_3, NULL);
    CHECK_STR("y", s);
    free(s);

    StrBuf o = {0};
    em_comment_text(&o, "a*/b/*c\nd");
    CHECK_STR("a* /b/ *c d", o.data);
    sb_free(&o);

    char buf[64];
    em_shortest_g(buf, sizeof buf, 0.1, 1, 7);
    CHECK_STR("0.1", buf);
    em_shortest_g(buf, sizeof buf, 100, 0, 7);
    CHECK_STR("100", buf);
    em_shortest_g(buf, sizeof buf, 1e8, 0, 7);
    CHECK_STR("1e+08", buf);

    EmScope sc = {0};
    int a = em_scope_push(&sc, &sc, em_strdup("a"), 0);
    em_scope_push(&sc, &sc, em_strdup("b"), 1);
    CHECK_STR("b", em_scope_find(&sc, &sc, 1)->name);
    em_scope_pop(&sc, a + 1, 1);
    CHECK(em_scope_find(&sc, &sc, 1) == NULL);
    CHECK_STR("a", em_scope_find(&sc, &sc, 0)->name);
    CHECK(em_scope_has_name(&sc, "a") && !em_scope_has_name(&sc, "b"));
    em_scope_pop(&sc, 0, 1);
    free(sc.items);
}

int main(void)
{
    Arena *arena = ir_arena_new();
    ir_arena_set(arena);
    test_slots();
    test_plan();
    test_refusals();
    test_runtime_grid();
    test_printer_core();
    ir_arena_set(NULL);
    ir_arena_free(arena);
    return test_done("launch");
}
