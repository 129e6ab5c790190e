/* wgslprint.c - the WGSL printer: the loop IR of GPU-scheduled kernels as WebGPU compute
 * shaders, one module for a whole model (wgsl.h has the memory model).
 *
 * requires: lowered kernels of a GPU schedule; breaks: nothing (reads only)
 *
 * Each launch of the gpu-launch plan (lower/launch.h) is one @compute entry point with its
 * @workgroup_size; a loop bound to blockIdx / threadIdx is the workgroup_id /
 * local_invocation_id builtin (guarded where the launch has more), SCOPE_SHARED arrays are
 * var<workgroup> at module scope, barriers workgroupBarrier(). Values compute in f32, i32,
 * u32 and bool: the narrow and packed integers in i32 / u32 (a cast or store to one wraps
 * as C's does, kg_wrap_*), i64 and u64 narrowed to 32 bits (a constant that does not fit is
 * an error), the storage floats (f16, bf16, float8, f4e2m1, f8e8m0) in f32, rounded by
 * their kg_f32_to_T / kg_T_to_f32 on a cast or store. WGSL needs more parentheses than C (no mixing of bitwise,
 * shift and logical operators), a bool condition, a u32 shift count and a select() for ?:
 * (both sides are evaluated: loads are in range or harmlessly clamped by WebGPU's robust
 * buffer access). The statement walk, scopes and identifiers are printer.c's.
 */
#include "wgsl.h"
#include "printer.h"
#include "../lower/launch.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Workgroups per dimension that WebGPU guarantees (maxComputeWorkgroupsPerDimension). */
#define WGSL_MAX_GROUPS 65535

/* A buffer the module reads or writes through accessors. */
typedef struct {
    const Buffer *b;
    char *name;               /* the accessors are ld_NAME and st_NAME */
    WgslPlace at;
    int loaded, stored;
} WBuf;

struct WgslModule {
    const Target *t;
    WgslPlaceFn place;
    void *ctx;
    WBuf *bufs;
    int nbufs, capbufs;
    EmScope globals;          /* module-scope names: entry points, workgroup arrays */
    StrBuf shared;            /* the var<workgroup> declarations */
    StrBuf body;              /* the entry points */
    int failed;               /* a printing error was reported with ir_fail() */
};

typedef struct {
    EmPrinter em;
    WgslModule *M;
    const Kernel *k;
    EmScope decls;            /* the function's names, innermost last */
    EmScope shared;           /* SCOPE_SHARED buffers to their module names */
    int64_t launch[6];        /* the extents of the launch printed */
    int64_t fold;             /* a grid of more than WGSL_MAX_GROUPS blocks in x, dispatched as
                                 fold x rows: blockIdx.x is wid.x + wid.y * fold (0: not) */
} WPrinter;

/* ---------------------------------------------------------------- names and types */

/* WGSL keywords and reserved words, and the built-in functions and types the printed code
 * calls (a local of that name would hide them). */
static const char *const wgsl_words[] = {
    "alias", "break", "case", "const", "const_assert", "continue", "continuing", "default", "diagnostic",
    "discard", "else", "enable", "false", "fn", "for", "if", "let", "loop", "override", "requires", "return",
    "struct", "switch", "true", "var", "while", "NULL", "Self", "abstract", "active", "alignas", "alignof",
    "as", "asm", "asm_fragment", "async", "attribute", "auto", "await", "become", "binding_array", "cast",
    "catch", "class", "co_await", "co_return", "co_yield", "coherent", "column_major", "common", "compile",
    "compile_fragment", "concept", "const_cast", "consteval", "constexpr", "constinit", "crate", "debugger",
    "decltype", "delete", "demote", "demote_to_helper", "do", "dynamic_cast", "enum", "explicit", "export",
    "extends", "extern", "external", "fallthrough", "filter", "final", "finally", "friend", "from",
    "fxgroup", "get", "goto", "groupshared", "highp", "impl", "implements", "import", "inline",
    "instanceof", "interface", "layout", "lowp", "macro", "macro_rules", "match", "mediump", "meta", "mod",
    "module", "move", "mut", "mutable", "namespace", "new", "nil", "noexcept", "noinline",
    "nointerpolation", "noperspective", "null", "nullptr", "of", "operator", "package", "packoffset",
    "partition", "pass", "patch", "pixelfragment", "precise", "precision", "premerge", "priv",
    "protected", "pub", "public", "readonly", "ref", "regardless", "register", "reinterpret_cast",
    "require", "resource", "restrict", "self", "set", "shared", "sizeof", "smooth", "snorm", "static",
    "static_assert", "static_cast", "std", "subroutine", "super", "target", "template", "this",
    "thread_local", "throw", "trait", "try", "type", "typedef", "typeid", "typename", "typeof", "union",
    "unless", "unorm", "unsafe", "unsized", "use", "using", "varying", "virtual", "volatile", "wgsl",
    "where", "with", "writeonly", "yield",
    /* types and built-ins in use */
    "bool", "i32", "u32", "f32", "f16", "array", "vec2", "vec3", "vec4", "vec2f", "vec3f", "atomic", "ptr",
    "bitcast", "select", "abs", "min", "max", "exp", "exp2", "log", "log2", "sqrt", "inverseSqrt", "tanh",
    "pow", "floor", "ceil", "round", "trunc", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh",
    "asinh", "acosh", "atanh", "fma", "sign", "pack2x16float", "unpack2x16float", "workgroupBarrier",
    "storage", "workgroup", "private", "function", "read", "read_write", "mem", "wts", "wid", "lid",
    "kg_block",
};

static int is_wgsl_word(const char *s)
{
    for (size_t i = 0; i < sizeof wgsl_words / sizeof *wgsl_words; i++)
        if (!strcmp(s, wgsl_words[i]))
            return 1;
    /* the module's own prefixes: helpers, accessors, workgroup arrays */
    return !strncmp(s, "kg_", 3) || !strncmp(s, "ld_", 3) || !strncmp(s, "st_", 3) || !strncmp(s, "wg_", 3);
}

/* An identifier from raw (malloc'd): WGSL forbids a leading "__" and a lone "_". */
static char *wgsl_ident(const char *raw)
{
    char *s = em_ident_base(raw, "v", 1);
    if (!strcmp(s, "_") || !strncmp(s, "__", 2) || is_wgsl_word(s)) {
        char *t = malloc(strlen(s) + 3);
        if (!t)
            ir_die("out of memory");
        strcpy(t, "v_");
        strcat(t, s);
        free(s);
        s = t;
    }
    return s;
}

int em_wgsl_dtype_ok(DType t) { return t != DT_F64; }

int em_wgsl_dtype_fail(const char *what, DType t)
{
    if (t == DT_F64)
        return ir_fail("%s: webgpu has no 64-bit floats (WGSL has no f64; the target refuses f64 tensors: cast "
                       "to f32 in the model)", what);
    return ir_fail("%s: the webgpu target does not support %s tensors", what, ir_dtype_name(t));
}

/* The type a dtype computes in. */
static const char *vtype(DType t)
{
    switch (t) {
    case DT_BOOL: return "bool";
    case DT_I8:
    case DT_I16:
    case DT_I32:
    case DT_I64:
    case DT_I4:
    case DT_U4:
    case DT_I2:
    case DT_U2: return "i32";     /* (the packed integers compute as C's int, as in C) */
    case DT_U8:
    case DT_U16:
    case DT_U32:
    case DT_U64: return "u32";
    default: return "f32";
    }
}

static int is_uint(DType t) { return !strcmp(vtype(t), "u32"); }

/* kg_wrap_T for the types narrower than their value type (C's conversion to them), or NULL */
static const char *wrap_fn(DType t)
{
    switch (t) {
    case DT_I8: return "kg_wrap_i8";
    case DT_I16: return "kg_wrap_i16";
    case DT_U8: return "kg_wrap_u8";
    case DT_U16: return "kg_wrap_u16";
    case DT_I4: return "kg_wrap_i4";
    case DT_U4: return "kg_wrap_u4";
    case DT_I2: return "kg_wrap_i2";
    case DT_U2: return "kg_wrap_u2";
    default: return NULL;
    }
}
static int is_fl(DType t) { return !strcmp(vtype(t), "f32"); }

static int wfail(WPrinter *P, const char *msg)
{
    if (!P->M->failed)
        ir_fail("kernel %s: %s", P->k->name, msg);
    P->M->failed = 1;
    return -1;
}

static int name_taken(void *ctx, const char *s)
{
    WPrinter *P = ctx;
    return em_scope_has_name(&P->decls, s) || em_scope_has_name(&P->M->globals, s);
}

static int declare(WPrinter *P, const void *key, const char *raw, int live)
{
    char *base = wgsl_ident(raw);
    char *name = em_unique_name(base, name_taken, P);
    free(base);
    return em_scope_push(&P->decls, key, name, live);
}

static const char *var_name(WPrinter *P, const Var *v)
{
    const EmBinding *b = em_scope_find(&P->decls, v, 1);
    if (!b)
        ir_die("wgslprint: variable %s used outside its scope", v->name);
    return b->name;
}

/* The module's record of a parameter or workspace buffer (placed on first use). */
static WBuf *module_buf(WPrinter *P, const Buffer *b)
{
    WgslModule *M = P->M;
    for (int i = 0; i < M->nbufs; i++)
        if (M->bufs[i].b == b)
            return &M->bufs[i];
    WgslPlace at;
    if (M->place(M->ctx, b, &at)) {
        M->failed = 1;
        return NULL;
    }
    if (M->nbufs == M->capbufs)
        M->bufs = ir_grow(M->bufs, &M->capbufs, sizeof *M->bufs, 16);
    char *base = em_ident_base(b->name, "buf", 0);
    char *name = base;
    for (int n = 1;; n++) {
        int clash = 0;
        for (int i = 0; i < M->nbufs && !clash; i++)
            clash = !strcmp(M->bufs[i].name, name);
        if (!clash)
            break;
        if (name != base)
            free(name);
        name = malloc(strlen(base) + 24);
        if (!name)
            ir_die("out of memory");
        sprintf(name, "%s_%d", base, n);
    }
    if (name != base)
        free(base);
    M->bufs[M->nbufs] = (WBuf){b, name, at, 0, 0};
    return &M->bufs[M->nbufs++];
}

static int is_memory(const Buffer *b) { return b->scope == SCOPE_PARAM || b->scope == SCOPE_WORKSPACE; }

/* The name of a local or shared array. */
static const char *array_name(WPrinter *P, const Buffer *b)
{
    const EmBinding *x = em_scope_find(b->scope == SCOPE_SHARED ? &P->shared : &P->decls, b, 0);
    if (!x)
        ir_die("wgslprint: buffer %s used outside its allocation", b->name);
    return x->name;
}

/* ---------------------------------------------------------------- expressions */

/* What a printed expression is, for WGSL's grammar: which operands need parentheses. */
enum { C_PRIM, C_UNARY, C_MUL, C_ADD, C_SHIFT, C_REL, C_BAND, C_BOR, C_BXOR, C_LAND, C_LOR };
#define M_(c) (1u << (c))
#define M_ANY 0xffffu
#define M_UN (M_(C_PRIM) | M_(C_UNARY))
#define M_REL_OPND (M_UN | M_(C_MUL) | M_(C_ADD) | M_(C_SHIFT))
#define M_LOGIC_OPND (M_REL_OPND | M_(C_REL))

static void expr(WPrinter *P, const Expr *e, unsigned allowed);

/* The class of an infix operator on operands of type t, or -1 when it prints as a call. */
static int bin_class(BinOp op, DType t)
{
    switch (op) {
    case OP_ADD:
    case OP_SUB: return C_ADD;
    case OP_MUL:
    case OP_DIV: return C_MUL;
    case OP_MOD: return C_MUL;
    case OP_FLOORDIV:
    case OP_FLOORMOD: return is_uint(t) ? C_MUL : -1;
    case OP_MIN:
    case OP_MAX: return t == DT_BOOL ? (op == OP_MIN ? C_LAND : C_LOR) : -1;
    case OP_EQ:
    case OP_NE:
    case OP_LT:
    case OP_LE:
    case OP_GT:
    case OP_GE: return C_REL;
    case OP_AND: return C_LAND;
    case OP_OR: return C_LOR;
    case OP_BITAND: return t == DT_BOOL ? C_LAND : C_BAND;
    case OP_BITOR: return t == DT_BOOL ? C_LOR : C_BOR;
    case OP_BITXOR: return t == DT_BOOL ? C_REL : C_BXOR;
    case OP_SHL:
    case OP_SHR: return C_SHIFT;
    default: return -1;
    }
}

static int is_negative_const(const Expr *e)
{
    if (e->kind == E_INT)
        return !is_uint(e->dtype) && e->dtype != DT_BOOL && e->u.ival < 0;
    if (e->kind == E_FLOAT)
        return is_fl(e->dtype) && !isnan(e->u.fval) && signbit(e->u.fval) && !isinf(e->u.fval);
    return 0;
}

/* Casts that print nothing: same value type and no wrap (i64 is i32 here; f16 computes in
 * f32, a value cast to f16 being rounded by kg_f32_to_f16 below). */
static int noop_cast(DType from, DType to)
{
    if (from == to)
        return 1;
    if (!strcmp(vtype(from), vtype(to)) && (to == DT_I32 || to == DT_I64 || to == DT_U32 || to == DT_U64))
        return 1;
    return is_fl(from) && to == DT_F32;
}

static const Expr *transparent(const Expr *e)
{
    for (;;) {
        if (e->kind == E_CAST && noop_cast(e->u.cast.a->dtype, e->dtype))
            e = e->u.cast.a;
        else if (e->kind == E_CALL && e->u.call.fn == FN_ABS && is_uint(e->u.call.args[0]->dtype))
            e = e->u.call.args[0];
        else
            return e;
    }
}

static int expr_class(const Expr *e)
{
    e = transparent(e);
    switch (e->kind) {
    case E_INT:
    case E_FLOAT: return is_negative_const(e) ? C_UNARY : C_PRIM;
    case E_BIN: {
        int c = bin_class(e->u.bin.op, e->u.bin.a->dtype);
        return c < 0 ? C_PRIM : c;
    }
    case E_UN: return C_UNARY;
    default: return C_PRIM;
    }
}

static void print_int(WPrinter *P, int64_t v, DType t)
{
    StrBuf *o = P->em.out;
    if (t == DT_BOOL) {
        sb_puts(o, v ? "true" : "false");
        return;
    }
    /* the extremes of the 64-bit types (a reduction's identity, a clamp's open end) are the
     * 32-bit ones once every value is narrowed */
    if (t == DT_I64 && (v == INT64_MAX || v == INT64_MIN))
        v = v == INT64_MAX ? INT32_MAX : INT32_MIN;
    if (t == DT_U64 && v == -1)
        v = (int64_t)UINT32_MAX;
    if (is_uint(t)) {
        if (v < 0 || v > (int64_t)UINT32_MAX) {
            if (t != DT_U32)
                wfail(P, ir_fmt("the %s constant %lld does not fit in 32 bits (WGSL has no 64-bit integers: "
                                "the webgpu target narrows them to 32 bits)",
                                ir_dtype_name(t), (long long)v));
            v = (int64_t)(uint32_t)v;
        }
        sb_printf(o, "%lldu", (long long)v);
        return;
    }
    if (v < INT32_MIN || v > INT32_MAX) {
        wfail(P, ir_fmt("the %s constant %lld does not fit in 32 bits (WGSL has no 64-bit integers: "
                                "the webgpu target narrows them to 32 bits)",
                        ir_dtype_name(t), (long long)v));
        v = (int32_t)v;
    }
    if (v == INT32_MIN)
        sb_puts(o, "i32(-2147483648)");
    else
        sb_printf(o, "%lld", (long long)v);
}

static void print_float(WPrinter *P, double v)
{
    char buf[64];
    v = (float)v;
    if (isnan(v)) {
        sb_puts(P->em.out, "kg_nan()");
        return;
    }
    if (isinf(v)) {
        sb_puts(P->em.out, v > 0 ? "kg_inf()" : "-kg_inf()");
        return;
    }
    em_shortest_g(buf, sizeof buf, v, 1, 7);
    if (!strpbrk(buf, ".e"))
        strcat(buf, ".0");
    sb_printf(P->em.out, "%sf", buf);
}

/* e, and parentheses around it when its text starts with '-' (after a unary '-', a
 * binary '-', or as the first operand of nothing ambiguous) */
static void expr_nominus(WPrinter *P, const Expr *e, unsigned allowed)
{
    StrBuf tmp = {0}, *save = P->em.out;
    P->em.out = &tmp;
    expr(P, e, allowed);
    P->em.out = save;
    if (tmp.len && tmp.data[0] == '-')
        sb_printf(P->em.out, "(%s)", tmp.data);
    else if (tmp.len)
        sb_puts(P->em.out, tmp.data);
    sb_free(&tmp);
}

/* f(a, b, ...) */
static void call(WPrinter *P, const char *f, const Expr *const *args, int n)
{
    sb_printf(P->em.out, "%s(", f);
    for (int i = 0; i < n; i++) {
        if (i)
            sb_puts(P->em.out, ", ");
        expr(P, args[i], M_ANY);
    }
    sb_puts(P->em.out, ")");
}

/* a shift count: a u32 */
static void shift_count(WPrinter *P, const Expr *b)
{
    int64_t v;
    const Expr *t = transparent(b);
    if (t->kind == E_INT && ir_expr_is_const(t, &v) && v >= 0 && v < 4294967296LL)
        sb_printf(P->em.out, "%lldu", (long long)v);
    else if (is_uint(b->dtype))
        expr(P, b, M_UN);
    else {
        sb_puts(P->em.out, "u32(");
        expr(P, b, M_ANY);
        sb_puts(P->em.out, ")");
    }
}

static void print_bin(WPrinter *P, const Expr *e)
{
    BinOp op = e->u.bin.op;
    const Expr *a = e->u.bin.a, *b = e->u.bin.b;
    DType t = a->dtype;
    StrBuf *o = P->em.out;
    int c = bin_class(op, t);
    if (c >= 0) {
        const char *tok = ir_binop_text(op);
        unsigned left, right;
        switch (c) {
        case C_MUL: left = M_UN | M_(C_MUL), right = M_UN; break;
        case C_ADD: left = M_UN | M_(C_MUL) | M_(C_ADD), right = M_UN | M_(C_MUL); break;
        case C_SHIFT: left = M_UN, right = M_UN; break;
        case C_REL: left = right = M_REL_OPND; break;
        case C_LAND:
        case C_LOR: left = M_LOGIC_OPND | M_(c), right = M_LOGIC_OPND; break;
        default: left = M_UN | M_(c), right = M_UN; break;   /* & | ^ */
        }
        if (op == OP_FLOORDIV)
            tok = "/";
        else if (op == OP_FLOORMOD)
            tok = "%";
        else if (t == DT_BOOL && (op == OP_MIN || op == OP_BITAND))
            tok = "&&";
        else if (t == DT_BOOL && (op == OP_MAX || op == OP_BITOR))
            tok = "||";
        else if (t == DT_BOOL && op == OP_BITXOR)
            tok = "!=";
        expr(P, a, left);
        sb_printf(o, " %s ", tok);
        if (op == OP_SHL || op == OP_SHR)
            shift_count(P, b);
        else if (op == OP_SUB || op == OP_ADD)
            expr_nominus(P, b, right);
        else
            expr(P, b, right);
        return;
    }
    const Expr *args[2] = {a, b};
    switch (op) {
    case OP_MIN:
    case OP_MAX:
        if (is_fl(t))
            call(P, op == OP_MIN ? "kg_min_f32" : "kg_max_f32", args, 2);
        else
            call(P, op == OP_MIN ? "min" : "max", args, 2);
        return;
    case OP_FLOORDIV:
        if (is_fl(t)) {
            sb_puts(o, "floor(");
            expr(P, a, M_UN | M_(C_MUL));
            sb_puts(o, " / ");
            expr(P, b, M_UN);
            sb_puts(o, ")");
        } else {
            call(P, "kg_floordiv_i32", args, 2);
        }
        return;
    case OP_FLOORMOD: call(P, is_fl(t) ? "kg_floormod_f32" : "kg_floormod_i32", args, 2); return;
    default: ir_die("wgslprint: binary operator %d", (int)op);
    }
}

static const char *math_name(MathFn fn)
{
    switch (fn) {
    case FN_RSQRT: return "inverseSqrt";
    case FN_TANH: return "kg_tanh";
    case FN_SIGMOID: return "kg_sigmoid";
    case FN_ERF: return "kg_erf";
    case FN_POW: return "kg_pow";
    case FN_ISNAN: return "kg_isnan";
    case FN_ISINF: return "kg_isinf";
    default: return ir_mathfn_name(fn);   /* exp, log, sqrt, floor, round (half to even), ... */
    }
}

static void print_call(WPrinter *P, const Expr *e)
{
    MathFn fn = e->u.call.fn;
    int n = ir_mathfn_arity(fn);
    const Expr *const *args = (const Expr *const *)e->u.call.args;
    if (!is_fl(args[0]->dtype)) {
        if (fn != FN_ABS)
            ir_die("wgslprint: %s of an integer", ir_mathfn_name(fn));
        call(P, "abs", args, 1);
        return;
    }
    if (e->dtype != DT_BOOL && (fn == FN_ISNAN || fn == FN_ISINF)) {
        sb_printf(P->em.out, "%s(", vtype(e->dtype));
        call(P, math_name(fn), args, 1);
        sb_puts(P->em.out, ")");
        return;
    }
    call(P, math_name(fn), args, n);
}

/* a value of type `from` (already printed by `arg`) converted as C converts it to `to` */
static void print_cast(WPrinter *P, const Expr *e)
{
    const Expr *a = e->u.cast.a;
    DType from = a->dtype, to = e->dtype;
    StrBuf *o = P->em.out;
    if (to == DT_BOOL) {
        sb_puts(o, "(");
        expr(P, a, M_REL_OPND);
        sb_puts(o, is_fl(from) ? " != 0.0f)" : is_uint(from) ? " != 0u)" : " != 0)");
        return;
    }
    const char *wrap = wrap_fn(to);
    if (wrap)
        sb_printf(o, "%s(", wrap);
    if (ir_dtype_is_storage(to))
        sb_printf(o, "kg_%s_to_f32(kg_f32_to_%s(", ir_dtype_name(to), ir_dtype_name(to));
    if (strcmp(vtype(from), vtype(to)) || from == DT_BOOL) {
        sb_printf(o, "%s(", vtype(to));
        expr(P, a, M_ANY);
        sb_puts(o, ")");
    } else {
        expr(P, a, M_ANY);
    }
    if (ir_dtype_is_storage(to))
        sb_puts(o, "))");
    if (wrap)
        sb_puts(o, ")");
}

/* a's bits as e's type (same width): floats through bitcast, f16 / bf16 by their encoding */
static void print_bitcast(WPrinter *P, const Expr *e)
{
    const Expr *a = e->u.cast.a;
    DType from = a->dtype, to = e->dtype;
    StrBuf *o = P->em.out;
    int closes = 0;
    /* the bits of a, as a u32 */
    StrBuf bits = {0}, *save = o;
    P->em.out = &bits;
    if (ir_dtype_is_storage(from)) {
        sb_printf(&bits, "kg_f32_to_%s(", ir_dtype_name(from));
        expr(P, a, M_ANY);
        sb_puts(&bits, ")");
    } else if (is_uint(from)) {
        expr(P, a, M_ANY);
    } else {
        sb_puts(&bits, "bitcast<u32>(");
        expr(P, a, M_ANY);
        sb_puts(&bits, ")");
    }
    P->em.out = save;
    if (ir_dtype_is_storage(to)) {
        sb_printf(o, "kg_%s_to_f32(", ir_dtype_name(to));
        closes = 1;
    } else if (to == DT_I16 || to == DT_I8) {
        sb_printf(o, "kg_wrap_%s(bitcast<i32>(", ir_dtype_name(to));
        closes = 2;
    } else if (!is_uint(to)) {
        sb_printf(o, "bitcast<%s>(", vtype(to));
        closes = 1;
    }
    sb_puts(o, bits.data ? bits.data : "0u");
    for (int i = 0; i < closes; i++)
        sb_puts(o, ")");
    sb_free(&bits);
}

static void print_load(WPrinter *P, const Buffer *b, const Expr *index)
{
    StrBuf *o = P->em.out;
    if (is_memory(b)) {
        WBuf *w = module_buf(P, b);
        if (!w) {
            sb_puts(o, "0");
            return;
        }
        w->loaded = 1;
        sb_printf(o, "ld_%s(", w->name);
        expr(P, index, M_ANY);
        sb_puts(o, ")");
        return;
    }
    sb_puts(o, array_name(P, b));
    if (em_is_scalar(b))
        return;
    sb_puts(o, "[");
    expr(P, index, M_ANY);
    sb_puts(o, "]");
}

/* a condition: a bool */
static void condition(WPrinter *P, const Expr *c, unsigned allowed)
{
    if (c->dtype == DT_BOOL) {
        expr(P, c, allowed);
        return;
    }
    sb_puts(P->em.out, "(");
    expr(P, c, M_REL_OPND);
    sb_puts(P->em.out, is_fl(c->dtype) ? " != 0.0f)" : is_uint(c->dtype) ? " != 0u)" : " != 0)");
}

static void expr(WPrinter *P, const Expr *e, unsigned allowed)
{
    if (!e)
        ir_die("wgslprint: missing expression");
    e = transparent(e);
    int paren = !(allowed & M_(expr_class(e)));
    StrBuf *o = P->em.out;
    if (paren)
        sb_puts(o, "(");
    switch (e->kind) {
    case E_INT:
        if (is_fl(e->dtype))
            print_float(P, (double)e->u.ival);
        else
            print_int(P, e->u.ival, e->dtype);
        break;
    case E_FLOAT:
        if (is_fl(e->dtype))
            print_float(P, e->u.fval);
        else
            print_int(P, (int64_t)e->u.fval, e->dtype);
        break;
    case E_VAR: sb_puts(o, var_name(P, e->u.var)); break;
    case E_BIN: print_bin(P, e); break;
    case E_UN:
        if (e->u.un.op == UN_NOT && e->u.un.a->dtype != DT_BOOL) {
            sb_puts(o, "(");
            expr(P, e->u.un.a, M_REL_OPND);
            sb_puts(o, is_fl(e->u.un.a->dtype) ? " == 0.0f)" : is_uint(e->u.un.a->dtype) ? " == 0u)" : " == 0)");
            break;
        }
        sb_puts(o, e->u.un.op == UN_NEG ? "-" : e->u.un.op == UN_NOT ? "!" : "~");
        expr_nominus(P, e->u.un.a, M_UN);
        break;
    case E_CALL: print_call(P, e); break;
    case E_CAST: print_cast(P, e); break;
    case E_BITCAST: print_bitcast(P, e); break;
    case E_SELECT:
        sb_puts(o, "select(");
        expr(P, e->u.sel.f, M_ANY);
        sb_puts(o, ", ");
        expr(P, e->u.sel.t, M_ANY);
        sb_puts(o, ", ");
        condition(P, e->u.sel.cond, M_ANY);
        sb_puts(o, ")");
        break;
    case E_LOAD: print_load(P, e->u.load.buf, e->u.load.index); break;
    case E_ACCESS:
    case E_REDUCE: ir_die("wgslprint: tensor IR expression in a lowered kernel");
    }
    if (paren)
        sb_puts(o, ")");
}

/* ---------------------------------------------------------------- statements */

static void put_index(WPrinter *P, int slot)
{
    if (slot == 0 && P->fold)
        sb_puts(P->em.out, "i32(kg_block)");
    else
        sb_printf(P->em.out, "i32(%s.%c)", slot < 3 ? "wid" : "lid", "xyz"[slot % 3]);
}

/* A loop bound to a GPU index: the index itself, guarded where the launch has more. */
static void print_bound(WPrinter *P, const Stmt *s)
{
    int slot = lower_launch_slot(s->u.loop.bind_tag);
    int64_t ext = 0;
    ir_expr_is_const(s->u.loop.extent, &ext);
    int di = declare(P, s->u.loop.var, s->u.loop.var->name, 0);
    const char *name = P->decls.items[di].name;
    em_line(&P->em);
    sb_printf(P->em.out, "let %s = ", name);
    put_index(P, slot);
    sb_puts(P->em.out, "; // ");
    em_comment_text(P->em.out, s->u.loop.bind_tag);
    sb_puts(P->em.out, "\n");
    P->decls.items[di].live = 1;
    if (ext < P->launch[slot]) {
        em_line(&P->em);
        sb_printf(P->em.out, "if (%s < %lld) {\n", name, (long long)ext);
        em_block(&P->em, s->u.loop.body);
        em_line(&P->em);
        sb_puts(P->em.out, "}\n");
    } else {
        em_stmt(&P->em, s->u.loop.body);
    }
    P->decls.items[di].live = 0;
}

static void w_loop(EmPrinter *E, const Stmt *s)
{
    WPrinter *P = (WPrinter *)E;
    if (s->u.loop.kind == FOR_BOUND) {
        print_bound(P, s);
        return;
    }
    const Var *v = s->u.loop.var;
    const Expr *min = s->u.loop.min, *ext = s->u.loop.extent;
    int mark = P->decls.n;
    int di = declare(P, v, v->name, 0);
    const char *name = P->decls.items[di].name;
    em_line(E);
    sb_printf(E->out, "for (var %s: %s = ", name, vtype(v->dtype));
    expr(P, min, M_ANY);
    sb_printf(E->out, "; %s < ", name);
    int64_t lo, n;
    if (ir_expr_is_const(min, &lo) && lo == 0) {
        expr(P, ext, M_REL_OPND);
    } else if (ir_expr_is_const(min, &lo) && ir_expr_is_const(ext, &n)) {
        print_int(P, lo + n, v->dtype);
    } else {
        expr(P, min, M_UN | M_(C_MUL) | M_(C_ADD));
        sb_puts(E->out, " + ");
        expr_nominus(P, ext, M_UN | M_(C_MUL));
    }
    sb_printf(E->out, "; %s++) {", name);
    P->decls.items[di].live = 1;
    if (s->u.loop.kind == FOR_UNROLLED)
        sb_puts(E->out, " // unrolled");
    else if (s->u.loop.kind == FOR_VECTORIZED || s->u.loop.kind == FOR_TENSORIZED)
        sb_puts(E->out, " // vectorized");
    else if (s->u.loop.kind == FOR_PARALLEL)
        sb_puts(E->out, " // parallel");
    sb_puts(E->out, "\n");
    E->depth++;
    em_stmt(E, s->u.loop.body);
    E->depth--;
    em_line(E);
    sb_puts(E->out, "}\n");
    em_scope_pop(&P->decls, mark, 1);
}

static void w_let(EmPrinter *E, const Stmt *s)
{
    WPrinter *P = (WPrinter *)E;
    int di = declare(P, s->u.let.var, s->u.let.var->name, 0);
    em_line(E);
    sb_printf(E->out, "let %s: %s = ", P->decls.items[di].name, vtype(s->u.let.var->dtype));
    expr(P, s->u.let.value, M_ANY);
    sb_puts(E->out, ";\n");
    P->decls.items[di].live = 1;
    em_stmt(E, s->u.let.body);
    P->decls.items[di].live = 0;
}

/* the value stored into an element of type t: narrow integers wrap, f16 and bf16 round
 * (into local arrays, which hold values; an accessor converts for memory) */
static void stored_value(WPrinter *P, DType t, const Expr *v)
{
    const char *wrap = wrap_fn(t);
    const Expr *tv = transparent(v);
    if (tv->kind == E_CAST && tv->dtype == t)
        wrap = NULL;     /* the cast wrapped it */
    if (wrap)
        sb_printf(P->em.out, "%s(", wrap);
    if (ir_dtype_is_storage(t) && !(tv->kind == E_CAST && tv->dtype == t))
        sb_printf(P->em.out, "kg_%s_to_f32(kg_f32_to_%s(", ir_dtype_name(t), ir_dtype_name(t));
    else
        t = DT_F32;
    expr(P, v, M_ANY);
    if (t != DT_F32)
        sb_puts(P->em.out, "))");
    if (wrap)
        sb_puts(P->em.out, ")");
}

static void w_store(EmPrinter *E, const Stmt *s)
{
    WPrinter *P = (WPrinter *)E;
    const Buffer *b = s->u.store.buf;
    em_line(E);
    if (is_memory(b)) {
        WBuf *w = module_buf(P, b);
        if (!w) {
            sb_puts(E->out, "\n");
            return;
        }
        w->stored = 1;
        sb_printf(E->out, "st_%s(", w->name);
        expr(P, s->u.store.index, M_ANY);
        sb_puts(E->out, ", ");
        expr(P, s->u.store.value, M_ANY);
        sb_puts(E->out, ");\n");
        return;
    }
    sb_puts(E->out, array_name(P, b));
    if (!em_is_scalar(b)) {
        sb_puts(E->out, "[");
        expr(P, s->u.store.index, M_ANY);
        sb_puts(E->out, "]");
    }
    sb_puts(E->out, " = ");
    stored_value(P, b->dtype, s->u.store.value);
    sb_puts(E->out, ";\n");
}

static void w_alloc(EmPrinter *E, const Stmt *s)
{
    WPrinter *P = (WPrinter *)E;
    const Buffer *b = s->u.alloc.buf;
    if (b->scope != SCOPE_LOCAL) {
        /* workspace: the module's accessors; shared: declared at module scope */
        em_stmt(E, s->u.alloc.body);
        return;
    }
    /* the same buffer allocated twice in one block needs a block of its own */
    int braces = em_scope_find(&P->decls, b, 0) != NULL;
    int mark = P->decls.n;
    if (braces) {
        em_line(E);
        sb_puts(E->out, "{\n");
        E->depth++;
    }
    int di = declare(P, b, b->name, 1);
    em_line(E);
    if (em_is_scalar(b))
        sb_printf(E->out, "var %s: %s;\n", P->decls.items[di].name, vtype(b->dtype));
    else
        sb_printf(E->out, "var %s: array<%s, %lld>;\n", P->decls.items[di].name, vtype(b->dtype),
                  (long long)(b->size > 0 ? b->size : 1));
    em_stmt(E, s->u.alloc.body);
    if (braces) {
        em_scope_pop(&P->decls, mark, 1);
        E->depth--;
        em_line(E);
        sb_puts(E->out, "}\n");
    }
}

static void w_barrier(EmPrinter *E, const Stmt *s)
{
    (void)s;
    em_line(E);
    sb_puts(E->out, "workgroupBarrier();\n");
}

static void w_if_head(EmPrinter *E, const Stmt *s)
{
    sb_puts(E->out, "if (");
    condition((WPrinter *)E, s->u.cond.cond, M_ANY);
    sb_puts(E->out, ") {\n");
}

static int w_scope_mark(EmPrinter *E) { return ((WPrinter *)E)->decls.n; }
static void w_scope_pop(EmPrinter *E, int mark) { em_scope_pop(&((WPrinter *)E)->decls, mark, 1); }

static const EmStmtHooks w_hooks = {
    .loop = w_loop,
    .let = w_let,
    .store = w_store,
    .alloc = w_alloc,
    .barrier = w_barrier,
    .prefetch = NULL,
    .if_head = w_if_head,
    .scope_mark = w_scope_mark,
    .scope_pop = w_scope_pop,
};

/* ---------------------------------------------------------------- kernels */

/* Types WGSL cannot hold, anywhere in the kernel. */
static int bad_dtype_expr(const Expr *e, void *ctx)
{
    *(DType *)ctx = e->dtype;
    return !em_wgsl_dtype_ok(e->dtype);
}

static int bad_dtype_stmt(const Stmt *s, void *ctx)
{
    const Buffer *b = NULL;
    if (s->kind == S_ALLOC)
        b = s->u.alloc.buf;
    else if (s->kind == S_STORE)
        b = s->u.store.buf;
    else if (s->kind == S_FOR || s->kind == S_LET)
        *(DType *)ctx = s->kind == S_FOR ? s->u.loop.var->dtype : s->u.let.var->dtype;
    if (b)
        *(DType *)ctx = b->dtype;
    return !em_wgsl_dtype_ok(*(DType *)ctx);
}

/* Declare the workgroup arrays of a launch at module scope, named wg_FN_BUF. */
typedef struct {
    WPrinter *P;
    const char *fn;
} SharedCtx;

static int declare_shared(const Stmt *s, void *ctx)
{
    SharedCtx *c = ctx;
    WPrinter *P = c->P;
    if (s->kind != S_ALLOC || s->u.alloc.buf->scope != SCOPE_SHARED)
        return 0;
    const Buffer *b = s->u.alloc.buf;
    char *base = em_ident_base(ir_fmt("wg_%s_%s", c->fn, b->name), "wg", 0);
    char *name = em_unique_name(base, name_taken, P);
    free(base);
    sb_printf(&P->M->shared, "var<workgroup> %s: array<%s, %lld>;\n", name, vtype(b->dtype),
              (long long)(b->size > 0 ? b->size : 1));
    em_scope_push(&P->M->globals, b, em_strdup(name), 0);
    em_scope_push(&P->shared, b, name, 0);
    return 0;
}

static void print_entry(WPrinter *P, const LowerLaunchPlan *plan, int li, const EmLaunch *l)
{
    const Kernel *k = P->k;
    StrBuf *o = P->em.out;
    sb_puts(o, "\n// ");
    em_comment_text(o, k->name);
    if (plan->n > 1)
        sb_printf(o, ", launch %d of %d", li + 1, plan->n);
    for (int i = 0; li == 0 && i < k->notes.n; i++) {
        sb_puts(o, "\n// ");
        em_comment_text(o, k->notes.items[i]);
    }
    sb_printf(o, "\n// grid %lld x %lld x %lld workgroups of %lld x %lld x %lld invocations\n",
              (long long)l->grid[0], (long long)l->grid[1], (long long)l->grid[2], (long long)l->block[0],
              (long long)l->block[1], (long long)l->block[2]);
    SharedCtx sc = {P, l->name};
    em_stmt_any(plan->items[li].body, declare_shared, NULL, &sc);
    sb_printf(o, "@compute @workgroup_size(%lld, %lld, %lld)\nfn %s(@builtin(workgroup_id) wid: vec3<u32>, "
                 "@builtin(local_invocation_id) lid: vec3<u32>) {\n",
              (long long)l->block[0], (long long)l->block[1], (long long)l->block[2], l->name);
    P->em.depth = 1;
    if (P->fold) {
        /* (the guard is uniform in the workgroup: barriers inside stay legal) */
        sb_printf(o, "    let kg_block = wid.x + wid.y * %lldu; // blockIdx.x: %lld workgroups as %lld x %lld\n"
                     "    if (kg_block < %lldu) {\n",
                  (long long)P->fold, (long long)P->launch[0], (long long)l->grid[0], (long long)l->grid[1],
                  (long long)P->launch[0]);
        P->em.depth = 2;
    }
    em_stmt(&P->em, plan->items[li].body);
    em_scope_pop(&P->decls, 0, 1);
    if (P->fold)
        sb_puts(o, "    }\n");
    sb_puts(o, "}\n");
}

int em_wgsl_kernel(WgslModule *M, const Kernel *k, const char *fname, EmLaunch **launches)
{
    *launches = NULL;
    DType bad = DT_F32;
    if (em_stmt_any(k->body, bad_dtype_stmt, bad_dtype_expr, &bad))
        return em_wgsl_dtype_fail(ir_fmt("kernel %s", k->name), bad);
    LowerLaunchPlan plan;
    LowerLaunchLimits lim = {.lang = "webgpu", .max_threads = M->t->max_threads, .max_shared = M->t->max_shared,
                             .no_f64 = 1};
    if (lower_launch_plan(k, &lim, &plan)) {
        lower_launch_free(&plan);
        return -1;
    }
    int n = plan.n;
    EmLaunch *L = calloc((size_t)(n ? n : 1), sizeof *L);
    if (!L)
        ir_die("out of memory");
    WPrinter P = {{&M->body, 0, &w_hooks}, M, k, {0}, {0}, {0}, 0};
    int rc = 0;
    for (int li = 0; li < n && rc == 0; li++) {
        EmLaunch *l = &L[li];
        char *base = wgsl_ident(n == 1 ? fname : ir_fmt("%s_%d", fname, li));
        l->name = em_unique_name(base, name_taken, &P);
        free(base);
        em_scope_push(&M->globals, l, em_strdup(l->name), 0);
        P.fold = 0;
        for (int j = 0; j < 3; j++) {
            l->grid[j] = plan.items[li].ext[j];
            l->block[j] = plan.items[li].ext[3 + j];
        }
        if (l->grid[0] > WGSL_MAX_GROUPS && l->grid[1] == 1) {
            /* x beyond the limit: rows of x blocks in y */
            int64_t rows = (l->grid[0] + WGSL_MAX_GROUPS - 1) / WGSL_MAX_GROUPS;
            P.fold = (l->grid[0] + rows - 1) / rows;
            l->grid[0] = P.fold;
            l->grid[1] = rows;
        }
        for (int j = 0; j < 3; j++)
            if (l->grid[j] > WGSL_MAX_GROUPS)
                rc = ir_fail("kernel %s: a grid of %lld workgroups in %c, above WebGPU's %d per dimension",
                             k->name, (long long)l->grid[j], "xyz"[j], WGSL_MAX_GROUPS);
        l->shared_bytes = plan.items[li].shared_bytes;
        memcpy(P.launch, plan.items[li].ext, sizeof P.launch);
        if (rc == 0)
            print_entry(&P, &plan, li, l);
        if (M->failed)
            rc = -1;
    }
    em_scope_pop(&P.decls, 0, 1);
    em_scope_pop(&P.shared, 0, 0);
    free(P.decls.items);
    free(P.shared.items);
    lower_launch_free(&plan);
    if (rc) {
        em_free_launches(L, n);
        return -1;
    }
    *launches = L;
    return n;
}

/* ---------------------------------------------------------------- the module */

WgslModule *em_wgsl_new(const Target *t, WgslPlaceFn place, void *ctx)
{
    WgslModule *M = calloc(1, sizeof *M);
    if (!M)
        ir_die("out of memory");
    M->t = t;
    M->place = place;
    M->ctx = ctx;
    return M;
}

void em_wgsl_free(WgslModule *M)
{
    if (!M)
        return;
    for (int i = 0; i < M->nbufs; i++)
        free(M->bufs[i].name);
    free(M->bufs);
    em_scope_pop(&M->globals, 0, 1);
    free(M->globals.items);
    sb_free(&M->shared);
    sb_free(&M->body);
    free(M);
}

/* word w of binding `at`, element i: "mem[1024 + i]" */
static void put_word(StrBuf *o, const WgslPlace *at)
{
    sb_printf(o, "%s[", at->binding ? "wts" : "mem");
    if (at->word)
        sb_printf(o, "%lld + ", (long long)at->word);
    if (at->stride != 1)
        sb_printf(o, "i * %lld", (long long)at->stride);
    else
        sb_puts(o, "i");
    sb_puts(o, "]");
}

/* ld_NAME and st_NAME of one buffer */
static void put_accessors(StrBuf *o, const WBuf *w)
{
    DType t = w->b->dtype;
    const char *vt = vtype(t);
    sb_puts(o, "// ");
    em_comment_text(o, w->b->name);
    sb_printf(o, ": %s[%lld]%s\n", ir_dtype_name(t), (long long)w->b->size,
              t == DT_I64 || t == DT_U64 ? ", narrowed to 32 bits" : "");
    if (w->loaded) {
        sb_printf(o, "fn ld_%s(i: i32) -> %s { return ", w->name, vt);
        StrBuf word = {0};
        put_word(&word, &w->at);
        if (t == DT_BOOL)
            sb_printf(o, "%s != 0u", word.data);
        else if (ir_dtype_is_storage(t))
            sb_printf(o, "kg_%s_to_f32(%s)", ir_dtype_name(t), word.data);
        else if (is_uint(t))
            sb_puts(o, word.data);
        else
            sb_printf(o, "bitcast<%s>(%s)", vt, word.data);
        sb_puts(o, "; }\n");
        sb_free(&word);
    }
    if (w->stored) {
        sb_printf(o, "fn st_%s(i: i32, v: %s) { ", w->name, vt);
        put_word(o, &w->at);
        if (t == DT_BOOL)
            sb_puts(o, " = select(0u, 1u, v); }\n");
        else if (ir_dtype_is_storage(t))
            sb_printf(o, " = kg_f32_to_%s(v); }\n", ir_dtype_name(t));
        else if (wrap_fn(t) && !is_uint(t))
            sb_printf(o, " = bitcast<u32>(%s(v)); }\n", wrap_fn(t));
        else if (t == DT_U8 || t == DT_U16)
            sb_printf(o, " = kg_wrap_%s(v); }\n", ir_dtype_name(t));
        else if (is_uint(t))
            sb_puts(o, " = v; }\n");
        else
            sb_puts(o, " = bitcast<u32>(v); }\n");
    }
}

int em_wgsl_finish(WgslModule *M, StrBuf *out, const char *source)
{
    const char *helpers = em_template("kgen_webgpu.wgsl");
    if (!helpers)
        return ir_fail("the kgen_webgpu.wgsl template is missing from this build");
    sb_puts(out, "// Generated by kgen from ");
    em_comment_text(out, source ? source : "?");
    sb_puts(out, ". Do not edit.\n// A WebGPU compute module: one entry point per launch, the memory model of kgen's "
                 "webgpu target\n// (every element one 32-bit word; ld_NAME / st_NAME read and write buffer NAME).\n\n");
    sb_puts(out, "@group(0) @binding(0) var<storage, read_write> mem: array<u32>;   // the arena, inputs, outputs\n"
                 "@group(0) @binding(1) var<storage, read> wts: array<u32>;         // the weights\n\n");
    sb_puts(out, helpers);
    sb_puts(out, "\n// ---------------------------------------------------------------- buffers\n\n");
    for (int i = 0; i < M->nbufs; i++)
        put_accessors(out, &M->bufs[i]);
    if (M->shared.len) {
        sb_puts(out, "\n// ---------------------------------------------------------------- workgroup memory\n\n");
        sb_puts(out, M->shared.data);
    }
    sb_puts(out, "\n// ---------------------------------------------------------------- kernels\n");
    if (M->body.len)
        sb_puts(out, M->body.data);
    return 0;
}
