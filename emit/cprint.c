/* cprint.c - the one C-family printer: a Kernel of loop IR as a C function (and, through
 * the Dialect table, as a CUDA, OpenCL or Metal kernel).
 *
 * requires: a lowered kernel (no E_ACCESS / E_REDUCE); breaks: nothing (reads only)
 *
 * The output is meant to be reviewed by a person: minimal parentheses (but never the
 * ones gcc's -Wparentheses asks for), loop variables keep their IR names unless C scoping
 * forces a suffix, constants are spelled the shortest way that round-trips. The same
 * kernel always prints the same bytes: names depend only on the IR and its order.
 */
#include "cfamily.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- dialect: plain C */

/* The base spelling of each math function: C's double library, and kgen_runtime.h's
 * helpers where it has none. A dialect names only what it spells otherwise. */
static const char *const base_math[FN_COUNT] = {
    [FN_EXP] = "exp", [FN_LOG] = "log", [FN_SQRT] = "sqrt", [FN_RSQRT] = "kgen_rsqrt",
    [FN_TANH] = "tanh", [FN_SIGMOID] = "kgen_sigmoid", [FN_ERF] = "erf", [FN_POW] = "pow",
    [FN_ABS] = "fabs", [FN_FLOOR] = "floor", [FN_CEIL] = "ceil",
    /* ONNX Round rounds halves to even. rint does, in the default rounding mode, which
     * generated code never changes; round would round them away from zero. */
    [FN_ROUND] = "rint",
    [FN_TRUNC] = "trunc", [FN_SIN] = "sin", [FN_COS] = "cos", [FN_TAN] = "tan",
    [FN_ASIN] = "asin", [FN_ACOS] = "acos", [FN_ATAN] = "atan", [FN_SINH] = "sinh",
    [FN_COSH] = "cosh", [FN_ASINH] = "asinh", [FN_ACOSH] = "acosh", [FN_ATANH] = "atanh",
    [FN_ISNAN] = "isnan", [FN_ISINF] = "isinf", [FN_FMA] = "fma",
};

/* C99's float library: expf, fabsf, rintf ...; isnan and isinf are type-generic macros. */
static const EmMathName c_f32_math[] = {{FN_ISNAN, "isnan"}, {FN_ISINF, "isinf"}, {FN_COUNT, NULL}};

const char *em_math_name(const Dialect *d, MathFn fn, DType t, char *buf, size_t n)
{
    const EmMathName *over = t == DT_F64 ? d->f64_math : d->f32_math;
    for (; over && over->name; over++)
        if (over->fn == fn)
            return over->name;
    if (t == DT_F64 || !d->f32_suffix)
        return base_math[fn];
    snprintf(buf, n, "%sf", base_math[fn]);
    return buf;
}

const Dialect em_dialect_c = {
    .name = "c",
    .kernel_prefix = NULL,       /* a host function returning a status */
    .restrict_kw = "restrict",
    .global_qual = NULL,
    .local_qual = NULL,
    .barrier = NULL,
    .prefetch = "KGEN_PREFETCH",
    .f32_suffix = 1,
    .f32_math = c_f32_math,
    .fmod_f32 = "fmodf",
    .has_openmp = 1,
    .workspace_type = "void",
};

/* ---------------------------------------------------------------- dialects: GPUs */

/* CUDA has C's float library in device code, and rsqrtf besides. */
static const EmMathName cuda_f32_math[] = {
    {FN_ISNAN, "isnan"}, {FN_ISINF, "isinf"}, {FN_RSQRT, "rsqrtf"}, {FN_COUNT, NULL}};

/* OpenCL C and Metal overload one name per function for every float type, rsqrt among
 * them; kgen's sigmoid helper has a float version (kgen_gpu.h). */
static const EmMathName opencl_f32_math[] = {{FN_RSQRT, "rsqrt"}, {FN_SIGMOID, "kgen_sigmoidf"}, {FN_COUNT, NULL}};
static const EmMathName opencl_f64_math[] = {{FN_RSQRT, "rsqrt"}, {FN_COUNT, NULL}};

/* Metal lacks erf: kgen_metal.h supplies it. */
static const EmMathName metal_f32_math[] = {
    {FN_RSQRT, "rsqrt"}, {FN_SIGMOID, "kgen_sigmoidf"}, {FN_ERF, "kgen_erff"}, {FN_COUNT, NULL}};

const Dialect em_dialect_cuda = {
    .name = "cuda",
    .kernel_prefix = "__global__ void",
    .restrict_kw = "__restrict__",
    .global_qual = NULL,
    .local_qual = "__shared__",
    .barrier = "__syncthreads();",
    .f32_suffix = 1,
    .f32_math = cuda_f32_math,
    .fmod_f32 = "fmodf",
    .block_index = "blockIdx.%c",
    .thread_index = "threadIdx.%c",
    .launch_bounds = "__launch_bounds__(%lld)",
    .workspace_type = "unsigned char",
};

const Dialect em_dialect_opencl = {
    .name = "opencl",
    .kernel_prefix = "__kernel void",
    .restrict_kw = "restrict",
    .global_qual = "__global",
    .local_qual = "__local",
    .barrier = "barrier(CLK_LOCAL_MEM_FENCE);",
    .f32_math = opencl_f32_math,
    .f64_math = opencl_f64_math,
    .fmod_f32 = "fmod",
    .block_index = "get_group_id(%d)",
    .thread_index = "get_local_id(%d)",
    .launch_bounds = "__attribute__((reqd_work_group_size(%lld, %lld, %lld)))",
    .workspace_type = "uchar",
};

const Dialect em_dialect_metal = {
    .name = "metal",
    .kernel_prefix = "kernel void",
    .restrict_kw = NULL,
    .global_qual = "device",
    .local_qual = "threadgroup",
    .barrier = "threadgroup_barrier(mem_flags::mem_threadgroup);",
    .f32_math = metal_f32_math,
    .fmod_f32 = "fmod",
    .block_index = "kgen_block.%c",
    .thread_index = "kgen_thread.%c",
    .buffer_attr = " [[buffer(%d)]]",
    .index_params = "uint3 kgen_block [[threadgroup_position_in_grid]], uint3 kgen_thread [[thread_position_in_threadgroup]]",
    .workspace_type = "uchar",
    .no_f64 = 1,
};

const Dialect *em_dialect_for(TargetKind k)
{
    switch (k) {
    case TARGET_C: return &em_dialect_c;
    case TARGET_CUDA: return &em_dialect_cuda;
    case TARGET_OPENCL: return &em_dialect_opencl;
    case TARGET_METAL: return &em_dialect_metal;
    default: return NULL;
    }
}

/* A dialect without a kernel prefix prints a host C function: it returns a KGEN_ status
 * and may use kgen_runtime.h's macros (KGEN_VECTORIZE, KGEN_ALIGN). */
static int is_host(const Dialect *d) { return d->kernel_prefix == NULL; }

/* ---------------------------------------------------------------- names */

/* Words a generated name must not take: C and C++ keywords (the generated header is
 * included from C++), OpenCL/Metal address spaces, and every library name the printer
 * emits, which a local variable would shadow. */
static const char *const reserved_words[] = {
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
    "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register",
    "restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch",
    "typedef", "union", "unsigned", "void", "volatile", "while", "bool", "true", "false",
    "alignas", "alignof", "and", "and_eq", "asm", "bitand", "bitor", "catch", "char16_t",
    "char32_t", "class", "compl", "constexpr", "const_cast", "decltype", "delete",
    "dynamic_cast", "explicit", "export", "friend", "mutable", "namespace", "new",
    "noexcept", "not", "not_eq", "nullptr", "operator", "or", "or_eq", "private",
    "protected", "public", "reinterpret_cast", "static_assert", "static_cast", "template",
    "this", "thread_local", "throw", "try", "typeid", "typename", "using", "virtual",
    "wchar_t", "xor", "xor_eq",
    "kernel", "global", "local", "constant", "device", "threadgroup", "thread", "half",
    "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t",
    "size_t", "ptrdiff_t", "uintptr_t", "NULL", "INT64_C", "UINT64_C", "INFINITY", "NAN",
    "fmod", "fmodf", "main", "min", "max", "abs", "workspace",
};

/* Names a variable must not take in a GPU kernel: index built-ins, qualifiers, the
 * overloaded math names it would shadow. */
static const char *const gpu_reserved_words[] = {
    "blockIdx", "threadIdx", "blockDim", "gridDim", "warpSize", "kgen_block", "kgen_thread",
    "__global", "__local", "__kernel", "__constant", "__private", "private", "uchar", "ushort", "uint",
    "ulong", "exp", "log", "sqrt", "rsqrt", "tanh", "erf", "pow", "fabs", "floor", "ceil", "rint",
    "trunc", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh",
    "isnan", "isinf", "fma", "metal", "barrier", "select", "clamp", "sign", "step", "mix",
};

static int is_reserved(const char *s)
{
    if (strncmp(s, "kgen_", 5) == 0 || strncmp(s, "KGEN_", 5) == 0)
        return 1;
    for (size_t i = 0; i < sizeof reserved_words / sizeof *reserved_words; i++)
        if (strcmp(s, reserved_words[i]) == 0)
            return 1;
    char buf[32];
    for (int f = 0; f < FN_COUNT; f++)
        if (!strcmp(s, em_math_name(&em_dialect_c, (MathFn)f, DT_F32, buf, sizeof buf)) ||
            !strcmp(s, em_math_name(&em_dialect_c, (MathFn)f, DT_F64, buf, sizeof buf)))
            return 1;
    return 0;
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        ir_die("out of memory");
    return p;
}

static char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    return memcpy(xmalloc(n), s, n);
}

static int is_alpha(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static int is_digit(int c) { return c >= '0' && c <= '9'; }

/* Any string as a C identifier: other characters become '_' ("i.outer" -> "i_outer"), a
 * leading digit gets "v_", and names C reserves for the implementation ("_X", "__x") a
 * "v". ASCII tests, so the locale cannot change the result. */
static char *sanitize(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    char *r = xmalloc(n + 3), *p = r;
    if (n == 0) {
        strcpy(r, "v");
        return r;
    }
    if (is_digit(s[0])) {
        *p++ = 'v';
        *p++ = '_';
    } else if (s[0] == '_' && (s[1] == '_' || (s[1] >= 'A' && s[1] <= 'Z'))) {
        *p++ = 'v';
    }
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        *p++ = is_alpha(c) || is_digit(c) || c == '_' ? c : '_';
    }
    *p = 0;
    return r;
}

char *em_c_func_name(const Kernel *k)
{
    char *s = sanitize(k->name);
    if (is_reserved(s)) {
        char *r = xmalloc(strlen(s) + 8);
        strcpy(r, s);
        strcat(r, "_kernel");
        free(s);
        return r;
    }
    return s;
}

/* The type a dtype is computed in: its storage type, except the storage float types f16,
 * bf16 and float8 (computed in float). */
static const char *value_type(DType t)
{
    if (t == DT_I4 || t == DT_I2)
        return "int8_t";     /* (stored packed, in bytes: ir_dtype_ctype) */
    return ir_dtype_is_storage(t) ? "float" : ir_dtype_ctype(t);
}

/* ---------------------------------------------------------------- printer state */

/* A C declaration: a Var (live while its IR scope lasts) or a Buffer (never looked up
 * here; kept so that a second declaration in the same block is noticed). */
typedef struct {
    const void *key;
    char *name;
    int live;
} Decl;

typedef struct {
    StrBuf *out;
    const Dialect *d;
    const Kernel *k;
    char *fname;           /* the function's name */
    Decl *bufs;            /* every buffer of the kernel, with its kernel-wide name */
    int nbufs, capbufs;
    Decl *decls;           /* declarations of the open C blocks, innermost last */
    int ndecls, capdecls;
    int depth;             /* indentation level */
    /* GPU launches */
    int64_t launch[6];     /* extents of blockIdx.x/y/z, threadIdx.x/y/z in the launch printed */
    const char *launch_name;   /* the function name of that launch */
} Printer;

static void push_decl(Decl **v, int *n, int *cap, const void *key, char *name, int live)
{
    if (*n == *cap)
        *v = ir_grow(*v, cap, sizeof **v, 32);
    (*v)[*n].key = key;
    (*v)[*n].name = name;
    (*v)[(*n)++].live = live;
}

/* Leave C blocks down to `mark` declarations. */
static void pop_decls(Printer *P, int mark)
{
    while (P->ndecls > mark)
        free(P->decls[--P->ndecls].name);
}

static int name_taken(const Printer *P, const char *s)
{
    if (is_reserved(s) || (P->fname && strcmp(s, P->fname) == 0))
        return 1;
    for (size_t i = 0; !is_host(P->d) && i < sizeof gpu_reserved_words / sizeof *gpu_reserved_words; i++)
        if (strcmp(s, gpu_reserved_words[i]) == 0)
            return 1;
    for (int i = 0; i < P->nbufs; i++)
        if (strcmp(P->bufs[i].name, s) == 0)
            return 1;
    for (int i = 0; i < P->ndecls; i++)
        if (strcmp(P->decls[i].name, s) == 0)
            return 1;
    return 0;
}

/* The sanitized name, or with the first free suffix _1, _2, ... */
static char *unique_name(const Printer *P, const char *raw)
{
    char *base = sanitize(raw);
    if (!name_taken(P, base))
        return base;
    char *s = xmalloc(strlen(base) + 24);
    for (long i = 1;; i++) {
        sprintf(s, "%s_%ld", base, i);
        if (!name_taken(P, s))
            break;
    }
    free(base);
    return s;
}

static void add_buffer(Printer *P, const Buffer *b)
{
    if (!b)
        return;
    for (int i = 0; i < P->nbufs; i++)
        if (P->bufs[i].key == b)
            return;
    push_decl(&P->bufs, &P->nbufs, &P->capbufs, b, unique_name(P, b->name), 0);
}

static void collect_expr_buffers(Printer *P, const Expr *e)
{
    if (!e)
        return;
    switch (e->kind) {
    case E_BIN:
        collect_expr_buffers(P, e->u.bin.a);
        collect_expr_buffers(P, e->u.bin.b);
        break;
    case E_UN: collect_expr_buffers(P, e->u.un.a); break;
    case E_CALL:
        for (int i = 0; i < KG_MAX_ARGS; i++)
            collect_expr_buffers(P, e->u.call.args[i]);
        break;
    case E_CAST:
    case E_BITCAST: collect_expr_buffers(P, e->u.cast.a); break;
    case E_SELECT:
        collect_expr_buffers(P, e->u.sel.cond);
        collect_expr_buffers(P, e->u.sel.t);
        collect_expr_buffers(P, e->u.sel.f);
        break;
    case E_LOAD:
        add_buffer(P, e->u.load.buf);
        collect_expr_buffers(P, e->u.load.index);
        break;
    default: break;
    }
}

static void collect_buffers(Printer *P, const Stmt *s)
{
    if (!s)
        return;
    switch (s->kind) {
    case S_FOR:
        collect_expr_buffers(P, s->u.loop.min);
        collect_expr_buffers(P, s->u.loop.extent);
        collect_buffers(P, s->u.loop.body);
        break;
    case S_LET:
        collect_expr_buffers(P, s->u.let.value);
        collect_buffers(P, s->u.let.body);
        break;
    case S_IF:
        collect_expr_buffers(P, s->u.cond.cond);
        collect_buffers(P, s->u.cond.then);
        collect_buffers(P, s->u.cond.els);
        break;
    case S_STORE:
    case S_PREFETCH:
        add_buffer(P, s->u.store.buf);
        collect_expr_buffers(P, s->u.store.index);
        if (s->kind == S_STORE)
            collect_expr_buffers(P, s->u.store.value);
        break;
    case S_ALLOC:
        add_buffer(P, s->u.alloc.buf);
        collect_buffers(P, s->u.alloc.body);
        break;
    case S_SEQ:
        for (int i = 0; i < s->u.seq.n; i++)
            collect_buffers(P, s->u.seq.items[i]);
        break;
    case S_COMMENT:
    case S_BARRIER: break;
    }
}

/* Names are fixed before anything is printed, in a deterministic order: the function,
 * the parameters, then the other buffers as the body meets them. */
static void printer_init(Printer *P, StrBuf *out, const Kernel *k, const Dialect *d, int body)
{
    memset(P, 0, sizeof *P);
    P->out = out;
    P->k = k;
    P->d = d;
    P->fname = em_c_func_name(k);
    for (int i = 0; i < k->params.n; i++)
        add_buffer(P, k->params.items[i]);
    if (body) {
        collect_buffers(P, k->body);
        for (int i = 0; i < k->locals.n; i++)
            add_buffer(P, k->locals.items[i]);
    }
}

static void printer_free(Printer *P)
{
    pop_decls(P, 0);
    for (int i = 0; i < P->nbufs; i++)
        free(P->bufs[i].name);
    free(P->bufs);
    free(P->decls);
    free(P->fname);
}

static const char *buf_name(const Printer *P, const Buffer *b)
{
    for (int i = 0; i < P->nbufs; i++)
        if (P->bufs[i].key == b)
            return P->bufs[i].name;
    ir_die("cprint: buffer %s was not collected", b ? b->name : "(null)");
    return NULL;
}

static const char *var_name(const Printer *P, const Var *v)
{
    for (int i = P->ndecls - 1; i >= 0; i--)
        if (P->decls[i].key == v && P->decls[i].live)
            return P->decls[i].name;
    ir_die("cprint: variable %s used outside its loop or let", v ? v->name : "(null)");
    return NULL;
}

/* Declare v in the current C block, not yet visible (its own initializer may refer to an
 * outer binding of the same Var). Returns the index to make live. */
static int declare_var(Printer *P, const Var *v)
{
    push_decl(&P->decls, &P->ndecls, &P->capdecls, v, unique_name(P, v->name), 0);
    return P->ndecls - 1;
}

/* ---------------------------------------------------------------- uses */

static int expr_refs(const Expr *e, const void *key)
{
    if (!e)
        return 0;
    switch (e->kind) {
    case E_VAR: return e->u.var == key;
    case E_BIN: return expr_refs(e->u.bin.a, key) || expr_refs(e->u.bin.b, key);
    case E_UN: return expr_refs(e->u.un.a, key);
    case E_CALL:
        for (int i = 0; i < KG_MAX_ARGS; i++)
            if (expr_refs(e->u.call.args[i], key))
                return 1;
        return 0;
    case E_CAST:
    case E_BITCAST: return expr_refs(e->u.cast.a, key);
    case E_SELECT:
        return expr_refs(e->u.sel.cond, key) || expr_refs(e->u.sel.t, key) ||
               expr_refs(e->u.sel.f, key);
    case E_LOAD: return e->u.load.buf == key || expr_refs(e->u.load.index, key);
    default: return 0;
    }
}

/* Does s mention the Var or Buffer `key`? (Decides the (void)x; lines that keep
 * -Wunused quiet.) */
static int stmt_refs(const Stmt *s, const void *key)
{
    if (!s)
        return 0;
    switch (s->kind) {
    case S_FOR:
        return expr_refs(s->u.loop.min, key) || expr_refs(s->u.loop.extent, key) ||
               stmt_refs(s->u.loop.body, key);
    case S_LET: return expr_refs(s->u.let.value, key) || stmt_refs(s->u.let.body, key);
    case S_IF:
        return expr_refs(s->u.cond.cond, key) || stmt_refs(s->u.cond.then, key) ||
               stmt_refs(s->u.cond.els, key);
    case S_STORE:
        return s->u.store.buf == key || expr_refs(s->u.store.index, key) ||
               expr_refs(s->u.store.value, key);
    case S_PREFETCH: return s->u.store.buf == key || expr_refs(s->u.store.index, key);
    case S_ALLOC: return stmt_refs(s->u.alloc.body, key);
    case S_SEQ:
        for (int i = 0; i < s->u.seq.n; i++)
            if (stmt_refs(s->u.seq.items[i], key))
                return 1;
        return 0;
    case S_COMMENT:
    case S_BARRIER: return 0;
    }
    return 0;
}

static int uses_workspace(const Stmt *s)
{
    if (!s)
        return 0;
    switch (s->kind) {
    case S_FOR: return uses_workspace(s->u.loop.body);
    case S_LET: return uses_workspace(s->u.let.body);
    case S_IF: return uses_workspace(s->u.cond.then) || uses_workspace(s->u.cond.els);
    case S_ALLOC:
        return s->u.alloc.buf->scope == SCOPE_WORKSPACE || uses_workspace(s->u.alloc.body);
    case S_SEQ:
        for (int i = 0; i < s->u.seq.n; i++)
            if (uses_workspace(s->u.seq.items[i]))
                return 1;
        return 0;
    default: return 0;
    }
}

/* ---------------------------------------------------------------- expressions */

/* C precedence levels, loosest first. */
enum {
    P_NONE = 0,
    P_COND = 3,      /* ?: */
    P_LOR,           /* || */
    P_LAND,          /* && */
    P_BOR,           /* | */
    P_BXOR,          /* ^ */
    P_BAND,          /* & */
    P_EQ,            /* == != */
    P_REL,           /* < <= > >= */
    P_SHIFT,         /* << >> */
    P_ADD,           /* + - */
    P_MUL,           /* * / % */
    P_UNARY = 15,    /* - ! ~ (cast) */
    P_PRIMARY = 16   /* names, constants, calls, a[i], (...) */
};

static const struct {
    const char *tok;
    int prec;
} binops[OP_COUNT] = {
    [OP_ADD] = {"+", P_ADD},
    [OP_SUB] = {"-", P_ADD},
    [OP_MUL] = {"*", P_MUL},
    [OP_DIV] = {"/", P_MUL},
    [OP_MOD] = {"%", P_MUL},
    [OP_FLOORDIV] = {"/", P_MUL},    /* unsigned operands; signed ones call the runtime */
    [OP_FLOORMOD] = {"%", P_MUL},
    [OP_EQ] = {"==", P_EQ},
    [OP_NE] = {"!=", P_EQ},
    [OP_LT] = {"<", P_REL},
    [OP_LE] = {"<=", P_REL},
    [OP_GT] = {">", P_REL},
    [OP_GE] = {">=", P_REL},
    [OP_AND] = {"&&", P_LAND},
    [OP_OR] = {"||", P_LOR},
    [OP_BITAND] = {"&", P_BAND},
    [OP_BITOR] = {"|", P_BOR},
    [OP_BITXOR] = {"^", P_BXOR},
    [OP_SHL] = {"<<", P_SHIFT},
    [OP_SHR] = {">>", P_SHIFT},
};

static void expr(Printer *P, const Expr *e, int prec);

/* A one-element local buffer (an accumulator, a selected value) prints as a scalar. */
static int is_scalar(const Buffer *b)
{
    return b->scope == SCOPE_LOCAL && b->size == 1 && !ir_dtype_is_packed(b->dtype);
}

/* A packed element's code (kgen_lowbit.h): KGEN_U4(buf, index), sign-extended for i4, i2 */
static void packed_code(Printer *P, const Buffer *b, const Expr *index, int raw)
{
    int bits = ir_dtype_bits(b->dtype);
    sb_printf(P->out, "KGEN_%c%d(%s, ", !raw && ir_dtype_is_signed(b->dtype) && !ir_dtype_is_float(b->dtype) ? 'I' : 'U',
              bits, buf_name(P, b));
    expr(P, index, P_NONE);
    sb_puts(P->out, ")");
}

/* buf[index], or the bare name of a scalar */
static void element(Printer *P, const Buffer *b, const Expr *index)
{
    sb_puts(P->out, buf_name(P, b));
    if (is_scalar(b))
        return;
    sb_puts(P->out, "[");
    expr(P, index, P_NONE);
    sb_puts(P->out, "]");
}

static int is_unsigned_int(DType t)
{
    return t == DT_BOOL || t == DT_U8 || t == DT_U16 || t == DT_U32 || t == DT_U64;
}

/* The suffix of the runtime's kgen_min_* / kgen_max_*: narrow integers are promoted to
 * int by C anyway. */
static const char *minmax_suffix(DType t)
{
    if (ir_dtype_is_storage(t))
        return "f32";
    switch (t) {
    case DT_F16:
    case DT_F32: return "f32";
    case DT_F64: return "f64";
    case DT_I64: return "i64";
    case DT_U64: return "u64";
    case DT_U32: return "u32";
    default: return "i32";
    }
}

static void put_math_name(Printer *P, MathFn fn, DType t)
{
    char buf[32];
    sb_puts(P->out, em_math_name(P->d, fn, t, buf, sizeof buf));
}

/* Converting between these prints nothing: f16, bf16, float8 values are computed in float. */
static int noop_cast(DType from, DType to)
{
    return from == to || (ir_dtype_is_storage(from) && to == DT_F32);
}

/* An expression printed exactly as one of its operands. */
static const Expr *transparent(const Expr *e)
{
    for (;;) {
        if (e->kind == E_CAST && noop_cast(e->u.cast.a->dtype, e->dtype))
            e = e->u.cast.a;
        else if (e->kind == E_CALL && e->u.call.fn == FN_ABS &&
                 is_unsigned_int(e->u.call.args[0]->dtype))
            e = e->u.call.args[0];
        else
            return e;
    }
}

/* How a binary expression is printed: as an infix operator (returns 1, with the token and
 * precedence) or as a call. */
static int bin_infix(const Expr *e, const char **tok, int *prec)
{
    BinOp op = e->u.bin.op;
    DType t = e->u.bin.a->dtype;
    int isf = ir_dtype_is_float(t);
    switch (op) {
    case OP_MIN:
    case OP_MAX: return 0;
    case OP_MOD:
        if (isf)
            return 0;
        break;
    case OP_FLOORDIV:
    case OP_FLOORMOD:
        if (isf || !is_unsigned_int(t))
            return 0;
        break;
    default: break;
    }
    *tok = binops[op].tok;
    *prec = binops[op].prec;
    return 1;
}

static int is_negative_const(const Expr *e)
{
    if (e->kind == E_INT)
        return !is_unsigned_int(e->dtype) && e->u.ival < 0 &&
               !(e->u.ival == INT32_MIN && e->dtype != DT_I64) && e->u.ival != INT64_MIN;
    if (e->kind == E_FLOAT)
        return !isnan(e->u.fval) && signbit(e->u.fval);
    return 0;
}

/* The precedence of e's printed form. */
static int expr_prec(const Expr *e)
{
    const char *tok;
    int prec;
    e = transparent(e);
    switch (e->kind) {
    case E_INT:
    case E_FLOAT: return is_negative_const(e) ? P_UNARY : P_PRIMARY;
    case E_BIN: return bin_infix(e, &tok, &prec) ? prec : P_PRIMARY;
    case E_UN: return P_UNARY;
    case E_CAST: return e->dtype == DT_BOOL || ir_dtype_is_storage(e->dtype) ? P_PRIMARY : P_UNARY;
    case E_BITCAST: return P_UNARY;
    default: return P_PRIMARY;
    }
}

static void print_int(Printer *P, int64_t v, DType t)
{
    StrBuf *o = P->out;
    switch (t) {
    case DT_BOOL: sb_puts(o, v ? "1" : "0"); break;
    case DT_U8:
    case DT_U16: sb_printf(o, "%lld", (long long)v); break;
    case DT_U32: sb_printf(o, "%lluu", (unsigned long long)(uint32_t)v); break;
    case DT_U64: sb_printf(o, "UINT64_C(%llu)", (unsigned long long)(uint64_t)v); break;
    case DT_I64:
        if (v == INT64_MIN)
            sb_puts(o, "(-INT64_C(9223372036854775807) - 1)");
        else if (v < 0)
            sb_printf(o, "-INT64_C(%lld)", -(long long)v);
        else
            sb_printf(o, "INT64_C(%lld)", (long long)v);
        break;
    default:
        /* -2147483648 would be unary minus on a constant too large for int */
        if (v == INT32_MIN)
            sb_puts(o, "(-2147483647 - 1)");
        else
            sb_printf(o, "%lld", (long long)v);
        break;
    }
}

/* The shortest %g form that reads back as the same value, always with a '.' or an
 * exponent so it stays a floating constant. */
static void print_float(Printer *P, double v, DType t)
{
    char buf[64];
    int f32 = t != DT_F64;
    if (f32)
        v = (float)v;
    if (isnan(v)) {
        sb_puts(P->out, "NAN");
        return;
    }
    if (isinf(v)) {
        sb_puts(P->out, v > 0 ? "INFINITY" : "-INFINITY");
        return;
    }
    for (int p = 1; p <= 17; p++) {
        snprintf(buf, sizeof buf, "%.*g", p, v);
        if (f32 ? strtof(buf, NULL) == (float)v : strtod(buf, NULL) == v)
            break;
    }
    /* %g writes a short whole number like 100 as "1e+02": below 1e7 spell it out */
    char *e = strchr(buf, 'e');
    if (e && atoi(e + 1) >= 0 && atoi(e + 1) < 7)
        snprintf(buf, sizeof buf, "%.*g", atoi(e + 1) + 1, v);
    if (!strpbrk(buf, ".e"))
        strcat(buf, ".0");
    sb_puts(P->out, buf);
    if (f32)
        sb_puts(P->out, "f");
}

/* Print e, and wrap it in parentheses when its text would start with '-' (after a
 * binary '-', a unary '-' or a cast, "- -x" and "(float)-x" read badly). */
static void expr_nominus(Printer *P, const Expr *e, int prec)
{
    StrBuf tmp = {0}, *save = P->out;
    P->out = &tmp;
    expr(P, e, prec);
    P->out = save;
    if (tmp.len && tmp.data[0] == '-')
        sb_printf(P->out, "(%s)", tmp.data);
    else if (tmp.len)
        sb_puts(P->out, tmp.data);
    sb_free(&tmp);
}

/* The precedence an operand of infix `op` needs. Beyond C's rules, mixing comparison,
 * logical and bitwise operators always gets parentheses (gcc's -Wparentheses asks for
 * them, and readers do too): a < b == c, a && b || c, a & b + c, !a == b. */
static int operand_prec(BinOp op, const Expr *child, int base)
{
    int kind = ir_binop_kind(op);
    const Expr *c = transparent(child);
    const char *tok;
    int cprec;
    if (kind == 'A')
        return base;
    if (c->kind == E_UN && c->u.un.op == UN_NOT && kind == 'C')
        return P_PRIMARY;
    if (c->kind != E_BIN || !bin_infix(c, &tok, &cprec))
        return base;
    int ckind = ir_binop_kind(c->u.bin.op);
    switch (kind) {
    case 'C': return ckind == 'A' ? base : P_PRIMARY;
    case 'L': return ckind == 'C' || ckind == 'A' || c->u.bin.op == op ? base : P_PRIMARY;
    default: return c->u.bin.op == op ? base : P_PRIMARY;   /* bitwise, shifts */
    }
}

static void print_bin(Printer *P, const Expr *e)
{
    BinOp op = e->u.bin.op;
    const Expr *a = e->u.bin.a, *b = e->u.bin.b;
    DType t = a->dtype;
    const char *tok;
    int prec;
    if (bin_infix(e, &tok, &prec)) {
        expr(P, a, operand_prec(op, a, prec));
        sb_printf(P->out, " %s ", tok);
        if (op == OP_ADD || op == OP_SUB)
            expr_nominus(P, b, operand_prec(op, b, prec + 1));
        else
            expr(P, b, operand_prec(op, b, prec + 1));
        return;
    }
    int f64 = t == DT_F64;
    switch (op) {
    case OP_MIN:
    case OP_MAX:
        sb_printf(P->out, "kgen_%s_%s(", op == OP_MIN ? "min" : "max", minmax_suffix(t));
        break;
    case OP_MOD: sb_printf(P->out, "%s(", f64 ? "fmod" : P->d->fmod_f32); break;
    case OP_FLOORDIV:
        if (ir_dtype_is_float(t)) {       /* floor(a / b) */
            put_math_name(P, FN_FLOOR, t);
            sb_puts(P->out, "(");
            expr(P, a, P_MUL);
            sb_puts(P->out, " / ");
            expr(P, b, P_MUL + 1);
            sb_puts(P->out, ")");
            return;
        }
        sb_printf(P->out, "kgen_floordiv_%s(", t == DT_I64 ? "i64" : "i32");
        break;
    case OP_FLOORMOD:
        if (ir_dtype_is_float(t))
            sb_puts(P->out, f64 ? "kgen_floormod(" : "kgen_floormodf(");
        else
            sb_printf(P->out, "kgen_floormod_%s(", t == DT_I64 ? "i64" : "i32");
        break;
    default: ir_die("cprint: binary operator %d", (int)op);
    }
    expr(P, a, P_NONE);
    sb_puts(P->out, ", ");
    expr(P, b, P_NONE);
    sb_puts(P->out, ")");
}

static void print_call(Printer *P, const Expr *e)
{
    MathFn fn = e->u.call.fn;
    const Expr *a0 = e->u.call.args[0];
    DType t = a0->dtype;
    if (!ir_dtype_is_float(t)) {
        if (fn != FN_ABS)
            ir_die("cprint: %s of an integer", ir_mathfn_name(fn));
        sb_printf(P->out, "kgen_abs_%s(", t == DT_I64 ? "i64" : "i32");
        expr(P, a0, P_NONE);
        sb_puts(P->out, ")");
        return;
    }
    int pred = fn == FN_ISNAN || fn == FN_ISINF;   /* nonzero int, not necessarily 1 */
    if (pred)
        sb_puts(P->out, "(");
    put_math_name(P, fn, t);
    sb_puts(P->out, "(");
    for (int i = 0; i < KG_MAX_ARGS && e->u.call.args[i]; i++) {
        if (i)
            sb_puts(P->out, ", ");
        expr(P, e->u.call.args[i], P_NONE);
    }
    sb_puts(P->out, pred ? ") != 0)" : ")");
}

static void print_cast(Printer *P, const Expr *e)
{
    const Expr *a = e->u.cast.a;
    DType from = a->dtype, to = e->dtype;
    if (to == DT_BOOL) {
        sb_puts(P->out, "(");
        expr(P, a, P_REL);
        sb_puts(P->out, " != 0)");
    } else if (ir_dtype_is_storage(to)) {
        /* a value cast to f16 (bf16, float8) takes its precision; it stays a float afterwards */
        sb_printf(P->out, "kgen_%s_to_f32(kgen_f32_to_%s(", ir_dtype_name(to), ir_dtype_name(to));
        if (from == DT_F32 || ir_dtype_is_storage(from))
            expr(P, a, P_NONE);
        else {
            sb_puts(P->out, "(float)");
            expr_nominus(P, a, P_UNARY);
        }
        sb_puts(P->out, "))");
    } else if (ir_dtype_is_packed(to)) {
        /* wrapped into the type's range, as a store would (Cast computes its saturation) */
        sb_printf(P->out, "KGEN_WRAP_%s(", to == DT_I4 ? "I4" : to == DT_U4 ? "U4" : to == DT_I2 ? "I2" : "U2");
        if (ir_dtype_is_float(from)) {
            sb_puts(P->out, "(int32_t)");
            expr_nominus(P, a, P_UNARY);
        } else {
            expr(P, a, P_NONE);
        }
        sb_puts(P->out, ")");
    } else {
        sb_printf(P->out, "(%s)", value_type(to));
        expr_nominus(P, a, P_UNARY);
    }
}

/* The runtime's helpers move the bits: kgen_f32_bits and kgen_bits_f32 (f64 alike), and for
 * a storage float its own encoding (kgen_f32_to_f16, kgen_f16_to_f32); integers are their
 * bits through the unsigned type of their width. */
static void print_bitcast(Printer *P, const Expr *e)
{
    const Expr *a = e->u.cast.a;
    DType from = a->dtype, to = e->dtype;
    int nb = ir_dtype_bytes(to);
    DType bits = nb == 8 ? DT_U64 : nb == 4 ? DT_U32 : nb == 2 ? DT_U16 : DT_U8;
    StrBuf *o = P->out;
    int call = to == DT_F32 || to == DT_F64 || ir_dtype_is_storage(to);
    if (to == DT_F32 || to == DT_F64)
        sb_printf(o, "kgen_bits_%s(", ir_dtype_name(to));
    else if (call)
        sb_printf(o, "kgen_%s_to_f32(", ir_dtype_name(to));
    else
        sb_printf(o, "(%s)", value_type(to));
    if (from == DT_F32 || from == DT_F64 || ir_dtype_is_storage(from)) {
        if (ir_dtype_is_storage(from))
            sb_printf(o, "kgen_f32_to_%s(", ir_dtype_name(from));
        else
            sb_printf(o, "kgen_%s_bits(", ir_dtype_name(from));
        expr(P, a, P_NONE);
        sb_puts(o, ")");
    } else {
        sb_printf(o, "(%s)", value_type(bits));
        expr_nominus(P, a, P_UNARY);
    }
    if (call)
        sb_puts(o, ")");
}

static void expr(Printer *P, const Expr *e, int prec)
{
    if (!e)
        ir_die("cprint: missing expression");
    e = transparent(e);
    int paren = expr_prec(e) < prec;
    StrBuf *o = P->out;
    if (paren)
        sb_puts(o, "(");
    switch (e->kind) {
    case E_INT:
        if (ir_dtype_is_float(e->dtype))
            print_float(P, (double)e->u.ival, e->dtype);
        else
            print_int(P, e->u.ival, e->dtype);
        break;
    case E_FLOAT:
        if (ir_dtype_is_float(e->dtype))
            print_float(P, e->u.fval, e->dtype);
        else
            print_int(P, (int64_t)e->u.fval, e->dtype);
        break;
    case E_VAR: sb_puts(o, var_name(P, e->u.var)); break;
    case E_BIN: print_bin(P, e); break;
    case E_UN:
        sb_puts(o, e->u.un.op == UN_NEG ? "-" : e->u.un.op == UN_NOT ? "!" : "~");
        expr_nominus(P, e->u.un.a, P_UNARY);
        break;
    case E_CALL: print_call(P, e); break;
    case E_CAST: print_cast(P, e); break;
    case E_BITCAST: print_bitcast(P, e); break;
    case E_SELECT:
        sb_puts(o, "(");
        expr(P, e->u.sel.cond, P_LOR);
        sb_puts(o, " ? ");
        expr(P, e->u.sel.t, P_NONE);
        sb_puts(o, " : ");
        expr(P, e->u.sel.f, P_COND);
        sb_puts(o, ")");
        break;
    case E_LOAD:
        if (ir_dtype_is_storage(e->u.load.buf->dtype))
            sb_printf(o, "kgen_%s_to_f32(", ir_dtype_name(e->u.load.buf->dtype));
        if (ir_dtype_is_packed(e->u.load.buf->dtype))
            packed_code(P, e->u.load.buf, e->u.load.index, 0);
        else
            element(P, e->u.load.buf, e->u.load.index);
        if (ir_dtype_is_storage(e->u.load.buf->dtype))
            sb_puts(o, ")");
        break;
    case E_ACCESS:
    case E_REDUCE: ir_die("cprint: tensor IR expression in a lowered kernel");
    }
    if (paren)
        sb_puts(o, ")");
}

/* ---------------------------------------------------------------- statements */

static void line(Printer *P)
{
    sb_indent(P->out, P->depth);
}

/* KGEN_SET4(buf, index, code): a read-modify-write of the element's byte (kgen_lowbit.h;
 * the lowering keeps the loops around it serial). The macro keeps the code's low bits,
 * so a wrap to the type right before the store is left out; a copy moves the code. */
static void print_packed_store(Printer *P, const Buffer *b, const Expr *index, const Expr *v)
{
    StrBuf *o = P->out;
    sb_printf(o, "KGEN_SET%d(%s, ", ir_dtype_bits(b->dtype), buf_name(P, b));
    expr(P, index, P_NONE);
    sb_puts(o, ", ");
    if (v->kind == E_LOAD && v->u.load.buf->dtype == b->dtype) {
        packed_code(P, v->u.load.buf, v->u.load.index, 1);
    } else if (b->dtype == DT_F4E2M1) {
        if (v->kind == E_CAST && v->dtype == b->dtype)
            v = v->u.cast.a;
        sb_puts(o, "kgen_f32_to_f4e2m1(");
        if (v->dtype != DT_F32 && !ir_dtype_is_storage(v->dtype)) {
            sb_puts(o, "(float)");
            expr_nominus(P, v, P_UNARY);
        } else {
            expr(P, v, P_NONE);
        }
        sb_puts(o, ")");
    } else if (v->kind == E_CAST && v->dtype == b->dtype && !ir_dtype_is_float(v->u.cast.a->dtype)) {
        expr(P, v->u.cast.a, P_NONE);
    } else if (v->kind == E_CAST && v->dtype == b->dtype) {
        sb_puts(o, "(int32_t)");
        expr_nominus(P, v->u.cast.a, P_UNARY);
    } else {
        expr(P, v, P_NONE);
    }
    sb_puts(o, ");\n");
}

void em_c_comment(StrBuf *o, const char *s)
{
    for (; s && *s; s++) {
        if ((s[0] == '*' && s[1] == '/') || (s[0] == '/' && s[1] == '*'))
            sb_printf(o, "%c ", s[0]);
        else if (*s == '\n')
            sb_puts(o, " ");
        else
            sb_printf(o, "%c", *s);
    }
}

static void stmt(Printer *P, const Stmt *s);

static int count_lines(const StrBuf *o, size_t from)
{
    int n = 0;
    for (size_t i = from; i < o->len; i++)
        n += o->data[i] == '\n';
    return n;
}

/* Loops whose body runs longer than this many lines get their variable after the
 * closing brace. */
#define LONG_BODY 8

static void print_block(Printer *P, const Stmt *s);

/* 0..5 for blockIdx.x/y/z, threadIdx.x/y/z; -1 otherwise */
static int bind_slot(const char *tag)
{
    if (!tag)
        return -1;
    int base = !strncmp(tag, "blockIdx.", 9) ? 0 : !strncmp(tag, "threadIdx.", 10) ? 3 : -1;
    if (base < 0)
        return -1;
    char c = tag[base ? 10 : 9];
    return c >= 'x' && c <= 'z' && !tag[base ? 11 : 10] ? base + (c - 'x') : -1;
}

static void put_index(Printer *P, int slot)
{
    const char *fmt = slot < 3 ? P->d->block_index : P->d->thread_index;
    int axis = slot % 3;
    if (strstr(fmt, "%c"))
        sb_printf(P->out, fmt, "xyz"[axis]);
    else
        sb_printf(P->out, fmt, axis);
}

/* A loop bound to a GPU index: no loop, the index itself (and a guard where the launch has
 * more blocks or threads than this loop has iterations). */
static void print_bound(Printer *P, const Stmt *s)
{
    Var *v = s->u.loop.var;
    int slot = bind_slot(s->u.loop.bind_tag);
    int64_t ext = 0;
    ir_expr_is_const(s->u.loop.extent, &ext);
    int mark = P->ndecls;
    int di = declare_var(P, v);
    const char *name = P->decls[di].name;
    line(P);
    sb_printf(P->out, "const %s %s = (%s)", value_type(v->dtype), name, value_type(v->dtype));
    put_index(P, slot);
    sb_puts(P->out, ";");
    sb_puts(P->out, " /* ");
    em_c_comment(P->out, s->u.loop.bind_tag);
    sb_puts(P->out, " */\n");
    P->decls[di].live = 1;
    if (ext < P->launch[slot]) {
        line(P);
        sb_printf(P->out, "if (%s < ", name);
        print_int(P, ext, v->dtype);
        sb_puts(P->out, ") {\n");
        print_block(P, s->u.loop.body);
        line(P);
        sb_puts(P->out, "}\n");
    } else {
        stmt(P, s->u.loop.body);
    }
    /* declared in the enclosing C block: the name stays taken until that block closes (a
     * second cooperative copy binds the same index again) */
    P->decls[di].live = 0;
    (void)mark;
}

/* &buf[index], or the bare name at index 0 */
static void address(Printer *P, const Buffer *b, Expr *index)
{
    int64_t v;
    index = ir_simplify(index, NULL);
    if (ir_expr_is_const(index, &v) && v == 0) {
        sb_puts(P->out, buf_name(P, b));
        return;
    }
    sb_puts(P->out, "&");
    element(P, b, index);
}

/* A tensorized loop (ir/tensorize.c): one call of a kgen_ukernels.h micro-kernel per chunk. */
static void print_tensorized(Printer *P, const IrTzCall *c)
{
    int64_t off = 0;
    for (int i = 0; i < c->nchunks; i++) {
        line(P);
        sb_printf(P->out, "kgen_fma_bcast_f32x%d(", c->width[i]);
        address(P, c->acc, ir_add(c->acc_index, ir_idx(off)));
        sb_puts(P->out, ", ");
        expr(P, c->scalar, P_NONE);
        sb_puts(P->out, ", ");
        address(P, c->b, ir_add(c->b_index, ir_idx(off)));
        sb_puts(P->out, ");\n");
        off += c->width[i];
    }
}

int em_c_uses_ukernels(const Stmt *s)
{
    if (!s)
        return 0;
    switch (s->kind) {
    case S_FOR: return s->u.loop.kind == FOR_TENSORIZED || em_c_uses_ukernels(s->u.loop.body);
    case S_LET: return em_c_uses_ukernels(s->u.let.body);
    case S_IF: return em_c_uses_ukernels(s->u.cond.then) || em_c_uses_ukernels(s->u.cond.els);
    case S_ALLOC: return em_c_uses_ukernels(s->u.alloc.body);
    case S_SEQ:
        for (int i = 0; i < s->u.seq.n; i++)
            if (em_c_uses_ukernels(s->u.seq.items[i]))
                return 1;
        return 0;
    default: return 0;
    }
}

static void print_for(Printer *P, const Stmt *s)
{
    const Dialect *d = P->d;
    if (s->u.loop.kind == FOR_BOUND && !is_host(d)) {
        print_bound(P, s);
        return;
    }
    IrTzCall call;
    if (s->u.loop.kind == FOR_TENSORIZED && is_host(d) && ir_tensorize_match(s, &call)) {
        print_tensorized(P, &call);
        return;
    }
    /* (a tensorized loop in a GPU dialect, or one whose body no longer matches: a loop) */
    ForKind kind = s->u.loop.kind == FOR_TENSORIZED ? FOR_VECTORIZED : s->u.loop.kind;
    Var *v = s->u.loop.var;
    const Expr *min = s->u.loop.min, *ext = s->u.loop.extent;
    int64_t lo = 0, n = 0;
    int lo_const = min->kind == E_INT, ext_const = ext->kind == E_INT;
    if (lo_const)
        lo = min->u.ival;
    if (ext_const)
        n = ext->u.ival;

    if (kind == FOR_VECTORIZED && is_host(d)) {
        line(P);
        sb_puts(P->out, "KGEN_VECTORIZE\n");
    } else if (kind == FOR_PARALLEL && d->has_openmp) {
        line(P);
        sb_puts(P->out, "KGEN_PARALLEL_FOR\n");
    }

    int mark = P->ndecls;
    int di = declare_var(P, v);
    const char *name = P->decls[di].name;
    line(P);
    sb_printf(P->out, "for (%s %s = ", value_type(v->dtype), name);
    expr(P, min, P_NONE);
    sb_printf(P->out, "; %s < ", name);
    if (lo_const && lo == 0) {
        expr(P, ext, P_REL + 1);
    } else if (lo_const && ext_const) {
        print_int(P, lo + n, v->dtype);
    } else {
        expr(P, min, P_ADD);
        sb_puts(P->out, " + ");
        expr_nominus(P, ext, P_ADD + 1);
    }
    sb_printf(P->out, "; ++%s) {", name);
    P->decls[di].live = 1;

    if (kind == FOR_UNROLLED)
        sb_puts(P->out, " /* unrolled */");
    else if (kind == FOR_BOUND) {
        sb_puts(P->out, " /* ");
        em_c_comment(P->out, s->u.loop.bind_tag ? s->u.loop.bind_tag : "bound");
        sb_puts(P->out, " */");
    } else if (kind == FOR_PARALLEL && !d->has_openmp)
        sb_puts(P->out, " /* parallel */");
    else if (kind == FOR_VECTORIZED && !is_host(d))
        sb_puts(P->out, " /* vectorized */");
    sb_puts(P->out, "\n");

    size_t start = P->out->len;
    P->depth++;
    stmt(P, s->u.loop.body);
    P->depth--;
    int long_body = count_lines(P->out, start) > LONG_BODY;
    line(P);
    if (long_body)
        sb_printf(P->out, "} /* %s */\n", P->decls[di].name);
    else
        sb_puts(P->out, "}\n");
    pop_decls(P, mark);
}

static void print_block(Printer *P, const Stmt *s)
{
    int mark = P->ndecls;
    P->depth++;
    stmt(P, s);
    P->depth--;
    pop_decls(P, mark);
}

static void print_if(Printer *P, const Stmt *s)
{
    line(P);
    for (;;) {
        /* host C: a hint where the lowering knows the branch is the usual one (gcc takes
         * a bounds check's && chain as unlikely and does not vectorize a loop inside it) */
        int likely = s->u.cond.likely && is_host(P->d);
        sb_puts(P->out, likely ? "if (KGEN_LIKELY(" : "if (");
        expr(P, s->u.cond.cond, P_NONE);
        sb_puts(P->out, likely ? ")) {\n" : ") {\n");
        print_block(P, s->u.cond.then);
        line(P);
        const Stmt *els = s->u.cond.els;
        if (!els) {
            sb_puts(P->out, "}\n");
            return;
        }
        if (els->kind == S_IF) {       /* else if chains stay flat */
            sb_puts(P->out, "} else ");
            s = els;
            continue;
        }
        sb_puts(P->out, "} else {\n");
        print_block(P, els);
        line(P);
        sb_puts(P->out, "}\n");
        return;
    }
}

static void print_alloc(Printer *P, const Stmt *s)
{
    const Buffer *b = s->u.alloc.buf;
    const Dialect *d = P->d;
    if (b->scope == SCOPE_SHARED && !is_host(d)) {
        stmt(P, s->u.alloc.body);     /* declared at the top of the kernel (hoist_shared) */
        return;
    }
    const char *name = buf_name(P, b);
    const char *ty = ir_dtype_ctype(b->dtype);
    int braces = 0;
    /* the same buffer allocated twice in one C block needs a block of its own */
    for (int i = 0; i < P->ndecls; i++)
        if (P->decls[i].key == b)
            braces = 1;
    int mark = P->ndecls;
    if (braces) {
        line(P);
        sb_puts(P->out, "{\n");
        P->depth++;
    }
    push_decl(&P->decls, &P->ndecls, &P->capdecls, b, xstrdup(name), 0);

    line(P);
    switch (b->scope) {
    case SCOPE_WORKSPACE: {
        const char *q = d->global_qual ? d->global_qual : "";
        const char *sp = d->global_qual ? " " : "";
        const char *rk = d->restrict_kw ? d->restrict_kw : "";
        sb_printf(P->out, "%s%s%s *%s%s%s = ", q, sp, ty, rk, d->restrict_kw ? " " : "", name);
        if (b->ws_offset == 0)
            sb_printf(P->out, "(%s%s%s *)workspace;\n", q, sp, ty);
        else
            sb_printf(P->out, "(%s%s%s *)((%s%sunsigned char *)workspace + %lld);\n", q, sp, ty, q,
                      sp, (long long)b->ws_offset);
        break;
    }
    case SCOPE_LOCAL:
    case SCOPE_SHARED: {
        long long size = b->size > 0 ? (long long)b->size : 1;
        if (b->scope == SCOPE_SHARED && d->local_qual)
            sb_printf(P->out, "%s %s %s[%lld];\n", d->local_qual, ty, name, size);
        else if (is_scalar(b))
            sb_printf(P->out, "%s %s;\n", ty, name);
        else if (is_host(d))
            sb_printf(P->out, "KGEN_ALIGN(64) %s %s[%lld];\n", ty, name, size);
        else
            sb_printf(P->out, "%s %s[%lld];\n", ty, name, size);
        break;
    }
    case SCOPE_PARAM: ir_die("cprint: allocation of parameter %s", b->name);
    }
    if (!stmt_refs(s->u.alloc.body, b)) {
        line(P);
        sb_printf(P->out, "(void)%s;\n", name);
    }
    stmt(P, s->u.alloc.body);
    if (braces) {
        pop_decls(P, mark);
        P->depth--;
        line(P);
        sb_puts(P->out, "}\n");
    }
}

static void stmt(Printer *P, const Stmt *s)
{
    if (!s)
        return;
    StrBuf *o = P->out;
    switch (s->kind) {
    case S_FOR: print_for(P, s); break;
    case S_LET: {
        Var *v = s->u.let.var;
        int di = declare_var(P, v);
        line(P);
        sb_printf(o, "const %s %s = ", value_type(v->dtype), P->decls[di].name);
        expr(P, s->u.let.value, P_NONE);
        sb_puts(o, ";\n");
        P->decls[di].live = 1;
        if (!stmt_refs(s->u.let.body, v)) {
            line(P);
            sb_printf(o, "(void)%s;\n", P->decls[di].name);
        }
        stmt(P, s->u.let.body);
        P->decls[di].live = 0;    /* its C name stays taken until the block closes */
        break;
    }
    case S_IF: print_if(P, s); break;
    case S_STORE: {
        const Buffer *b = s->u.store.buf;
        line(P);
        if (ir_dtype_is_packed(b->dtype)) {
            print_packed_store(P, b, s->u.store.index, transparent(s->u.store.value));
            break;
        }
        element(P, b, s->u.store.index);
        sb_puts(o, " = ");
        const Expr *v = transparent(s->u.store.value);
        if (ir_dtype_is_storage(b->dtype) && v->kind == E_LOAD && v->u.load.buf->dtype == b->dtype) {
            /* an f16 (bf16, float8) copy moves the bits */
            element(P, v->u.load.buf, v->u.load.index);
            sb_puts(o, ";\n");
        } else if (ir_dtype_is_storage(b->dtype)) {
            /* a cast to the type right before the store is the store's own rounding */
            if (v->kind == E_CAST && v->dtype == b->dtype)
                v = v->u.cast.a;
            sb_printf(o, "kgen_f32_to_%s(", ir_dtype_name(b->dtype));
            if (v->dtype != DT_F32 && !ir_dtype_is_storage(v->dtype)) {
                sb_puts(o, "(float)");
                expr_nominus(P, v, P_UNARY);
            } else {
                expr(P, v, P_NONE);
            }
            sb_puts(o, ");\n");
        } else {
            expr(P, s->u.store.value, P_NONE);
            sb_puts(o, ";\n");
        }
        break;
    }
    case S_ALLOC: print_alloc(P, s); break;
    case S_SEQ:
        for (int i = 0; i < s->u.seq.n; i++)
            stmt(P, s->u.seq.items[i]);
        break;
    case S_BARRIER:
        if (P->d->barrier) {
            line(P);
            sb_printf(o, "%s\n", P->d->barrier);
        }
        break;
    case S_PREFETCH:
        if (P->d->prefetch) {
            line(P);
            sb_printf(o, "%s(&", P->d->prefetch);
            element(P, s->u.store.buf, s->u.store.index);
            sb_puts(o, ");\n");
        }
        break;
    case S_COMMENT: {
        const char *t = s->u.comment ? s->u.comment : "";
        line(P);
        sb_puts(o, "/* ");
        em_c_comment(o, t);
        sb_puts(o, " */\n");
        break;
    }
    }
}

/* ---------------------------------------------------------------- functions */

/* Parameters on one line while the prototype fits in this many columns, else one a line. */
#define PROTO_WIDTH 120


static void print_proto(Printer *P)
{
    const Kernel *k = P->k;
    const Dialect *d = P->d;
    const char *rk = d->restrict_kw;
    char **items = xmalloc(sizeof *items * (size_t)(k->params.n + 2));
    int n = 0;
    size_t total = 0;

    int nparams = k->internal ? k->params.n : k->params.n + 1;
    for (int i = 0; i < nparams; i++) {
        StrBuf p = {0};
        if (d->global_qual)
            sb_printf(&p, "%s ", d->global_qual);
        if (d->no_f64 && i < k->params.n && ((const Buffer *)k->params.items[i])->dtype == DT_F64)
            ir_fail("%s has no 64-bit floats, and %s is f64", d->name, ((const Buffer *)k->params.items[i])->name);
        if (i < k->params.n) {
            const Buffer *b = k->params.items[i];
            int ro = k->internal ? !ir_stmt_stores(k->body, b) : b->is_input;
            sb_printf(&p, "%s%s *", ro ? "const " : "", ir_dtype_ctype(b->dtype));
            if (rk)
                sb_printf(&p, "%s ", rk);
            sb_puts(&p, buf_name(P, b));
        } else {
            sb_printf(&p, "%s *", d->workspace_type ? d->workspace_type : "void");
            if (rk)
                sb_printf(&p, "%s ", rk);
            sb_puts(&p, "workspace");
        }
        if (d->buffer_attr)
            sb_printf(&p, d->buffer_attr, i);
        items[n++] = p.data;
        total += p.len + 2;
    }

    if (d->index_params) {
        items[n] = xstrdup(d->index_params);
        total += strlen(items[n++]) + 2;
    }

    StrBuf *o = P->out;
    const char *fname = P->launch_name ? P->launch_name : P->fname;
    if (d->kernel_prefix) {
        sb_puts(o, d->kernel_prefix);
        if (d->launch_bounds && P->launch_name) {
            sb_puts(o, " ");
            const char *f = d->launch_bounds;
            if (strstr(f, "%lld") != strrchr(f, '%'))     /* x, y, z */
                sb_printf(o, f, (long long)P->launch[3], (long long)P->launch[4], (long long)P->launch[5]);
            else
                sb_printf(o, f, (long long)(P->launch[3] * P->launch[4] * P->launch[5]));
        }
        sb_printf(o, " %s(", fname);
    } else {
        if (k->internal)
            sb_puts(o, "static ");
        sb_printf(o, "%s %s(", k->internal ? "void" : "int", fname);
    }
    size_t col = o->len;
    while (col > 0 && o->data[col - 1] != '\n')
        col--;
    int wrap = o->len - col + total > PROTO_WIDTH;
    for (int i = 0; i < n; i++) {
        if (wrap)
            sb_puts(o, "\n    ");
        else if (i)
            sb_puts(o, ", ");
        sb_puts(o, items[i]);
        if (wrap && i + 1 < n)
            sb_puts(o, ",");
        free(items[i]);
    }
    sb_puts(o, ")");
    free(items);
}

void em_print_prototype(StrBuf *out, const Kernel *k, const Dialect *d)
{
    Printer P;
    StrBuf text = {0};
    printer_init(&P, &text, k, d, 0);
    print_proto(&P);
    if (text.len)
        sb_puts(out, text.data);
    sb_free(&text);
    printer_free(&P);
}

/* ---------------------------------------------------------------- low-bit types */

static int lowbit_type(DType t) { return ir_dtype_is_packed(t) || t == DT_F8E8M0; }

static int expr_lowbit(const Expr *e)
{
    if (!e)
        return 0;
    if (lowbit_type(e->dtype))
        return 1;
    switch (e->kind) {
    case E_BIN: return expr_lowbit(e->u.bin.a) || expr_lowbit(e->u.bin.b);
    case E_UN: return expr_lowbit(e->u.un.a);
    case E_CAST: return expr_lowbit(e->u.cast.a);
    case E_SELECT: return expr_lowbit(e->u.sel.cond) || expr_lowbit(e->u.sel.t) || expr_lowbit(e->u.sel.f);
    case E_CALL:
        for (int i = 0; i < KG_MAX_ARGS; i++)
            if (expr_lowbit(e->u.call.args[i]))
                return 1;
        return 0;
    case E_LOAD: return lowbit_type(e->u.load.buf->dtype) || expr_lowbit(e->u.load.index);
    default: return 0;
    }
}

static int stmt_lowbit(const Stmt *s)
{
    if (!s)
        return 0;
    switch (s->kind) {
    case S_FOR: return expr_lowbit(s->u.loop.min) || expr_lowbit(s->u.loop.extent) || stmt_lowbit(s->u.loop.body);
    case S_LET: return expr_lowbit(s->u.let.value) || stmt_lowbit(s->u.let.body);
    case S_IF: return expr_lowbit(s->u.cond.cond) || stmt_lowbit(s->u.cond.then) || stmt_lowbit(s->u.cond.els);
    case S_STORE:
        return lowbit_type(s->u.store.buf->dtype) || expr_lowbit(s->u.store.index) || expr_lowbit(s->u.store.value);
    case S_ALLOC: return lowbit_type(s->u.alloc.buf->dtype) || stmt_lowbit(s->u.alloc.body);
    case S_SEQ:
        for (int i = 0; i < s->u.seq.n; i++)
            if (stmt_lowbit(s->u.seq.items[i]))
                return 1;
        return 0;
    default: return 0;
    }
}

/* templates/kgen_lowbit.h, once into the file out that a kernel using the packed types or
 * f8e8m0 goes into, before it: a file without them stays as it was. */
static void put_lowbit(StrBuf *out, const Kernel *k)
{
    if (!stmt_lowbit(k->body) || (out->data && strstr(out->data, "#define KGEN_LOWBIT_H")))
        return;
    const char *text = em_template("kgen_lowbit.h");
    if (!text)
        ir_die("the kgen_lowbit.h template is missing from this build");
    sb_puts(out, text);
    sb_puts(out, "\n");
}

void em_print_kernel(StrBuf *out, const Kernel *k, const Dialect *d)
{
    Printer P;
    StrBuf text = {0};
    printer_init(&P, &text, k, d, 1);

    /* the header comment: the kernel's name, then its notes a line each */
    sb_puts(&text, "/* ");
    em_c_comment(&text, k->name);
    for (int i = 0; i < k->notes.n; i++) {
        const char *note = k->notes.items[i];
        sb_puts(&text, note && note[0] ? "\n * " : "\n *");
        em_c_comment(&text, note);
    }
    sb_puts(&text, k->notes.n ? "\n */\n" : " */\n");
    print_proto(&P);
    sb_puts(&text, "\n{\n");

    P.depth = 1;
    if (!k->internal && !uses_workspace(k->body)) {
        line(&P);
        sb_puts(&text, "(void)workspace;\n");
    }
    for (int i = 0; i < k->params.n; i++) {
        const Buffer *b = k->params.items[i];
        if (!stmt_refs(k->body, b)) {
            line(&P);
            sb_printf(&text, "(void)%s;\n", buf_name(&P, b));
        }
    }
    stmt(&P, k->body);
    if (is_host(d) && !k->internal) {
        line(&P);
        sb_puts(&text, "return KGEN_OK;\n");
    }
    sb_puts(&text, "}\n");

    put_lowbit(out, k);
    if (text.len)
        sb_puts(out, text.data);
    sb_free(&text);
    printer_free(&P);
}

/* ---------------------------------------------------------------- GPU kernels */

static int expr_f64(const Expr *e)
{
    if (!e)
        return 0;
    if (e->dtype == DT_F64)
        return 1;
    switch (e->kind) {
    case E_BIN: return expr_f64(e->u.bin.a) || expr_f64(e->u.bin.b);
    case E_UN: return expr_f64(e->u.un.a);
    case E_CAST:
    case E_BITCAST: return expr_f64(e->u.cast.a);
    case E_SELECT: return expr_f64(e->u.sel.cond) || expr_f64(e->u.sel.t) || expr_f64(e->u.sel.f);
    case E_CALL:
        for (int i = 0; i < KG_MAX_ARGS; i++)
            if (expr_f64(e->u.call.args[i]))
                return 1;
        return 0;
    case E_LOAD: return e->u.load.buf->dtype == DT_F64 || expr_f64(e->u.load.index);
    default: return 0;
    }
}

/* What one launch needs, and whether a GPU can run it as written. */
typedef struct {
    const Kernel *k;
    const Target *t;
    int64_t ext[6];        /* extents of the six indices (1 where unbound) */
    int active[6];         /* bound loops of each index open around the statement visited */
    int64_t shared;        /* bytes of shared memory */
    int barriers;
    int f64;               /* uses doubles */
} LaunchScan;

/* Does s store into shared buffers only (a cooperative copy)? */
static int stores_only_shared(const Stmt *s)
{
    if (!s)
        return 1;
    switch (s->kind) {
    case S_FOR: return stores_only_shared(s->u.loop.body);
    case S_LET: return stores_only_shared(s->u.let.body);
    case S_IF: return stores_only_shared(s->u.cond.then) && stores_only_shared(s->u.cond.els);
    case S_STORE: return s->u.store.buf->scope == SCOPE_SHARED;
    case S_ALLOC: return stores_only_shared(s->u.alloc.body);
    case S_SEQ:
        for (int i = 0; i < s->u.seq.n; i++)
            if (!stores_only_shared(s->u.seq.items[i]))
                return 0;
        return 1;
    default: return 1;
    }
}

static int scan_launch(LaunchScan *L, const Stmt *s)
{
    if (!s)
        return 0;
    switch (s->kind) {
    case S_FOR: {
        L->f64 |= expr_f64(s->u.loop.min) || expr_f64(s->u.loop.extent);
        if (s->u.loop.kind != FOR_BOUND)
            return scan_launch(L, s->u.loop.body);
        int slot = bind_slot(s->u.loop.bind_tag);
        int64_t lo = -1, ext = 0;
        if (slot < 0)
            return ir_fail("kernel %s: loop %s is bound to '%s', not a GPU index", L->k->name, s->u.loop.var->name,
                           s->u.loop.bind_tag ? s->u.loop.bind_tag : "nothing");
        if (!ir_expr_is_const(s->u.loop.min, &lo) || lo != 0 || !ir_expr_is_const(s->u.loop.extent, &ext) || ext < 1)
            return ir_fail("kernel %s: loop %s bound to %s needs a constant range starting at 0", L->k->name,
                           s->u.loop.var->name, s->u.loop.bind_tag);
        /* the same index again inside: only for a cooperative copy into shared memory, which
         * the block's threads share out (any other nesting would be the diagonal only) */
        if (L->active[slot] && !stores_only_shared(s->u.loop.body))
            return ir_fail("kernel %s: %s is bound twice in one loop nest (loop %s inside another loop bound to it)",
                           L->k->name, s->u.loop.bind_tag, s->u.loop.var->name);
        if (ext > L->ext[slot])
            L->ext[slot] = ext;
        int was = L->active[slot];
        L->active[slot] = 1;
        int rc = scan_launch(L, s->u.loop.body);
        L->active[slot] = was;
        return rc;
    }
    case S_LET:
        L->f64 |= s->u.let.var->dtype == DT_F64 || expr_f64(s->u.let.value);
        return scan_launch(L, s->u.let.body);
    case S_IF:
        L->f64 |= expr_f64(s->u.cond.cond);
        return scan_launch(L, s->u.cond.then) || scan_launch(L, s->u.cond.els);
    case S_STORE:
        L->f64 |= s->u.store.buf->dtype == DT_F64 || expr_f64(s->u.store.index) || expr_f64(s->u.store.value);
        return 0;
    case S_ALLOC:
        L->f64 |= s->u.alloc.buf->dtype == DT_F64;
        if (s->u.alloc.buf->scope == SCOPE_SHARED)
            L->shared += s->u.alloc.buf->size * ir_dtype_bytes(s->u.alloc.buf->dtype);
        return scan_launch(L, s->u.alloc.body);
    case S_SEQ:
        for (int i = 0; i < s->u.seq.n; i++)
            if (scan_launch(L, s->u.seq.items[i]))
                return -1;
        return 0;
    case S_BARRIER: L->barriers++; return 0;
    case S_PREFETCH:
    case S_COMMENT: return 0;
    }
    return 0;
}

/* After scan_launch: every thread of a block must reach each barrier, so none may sit
 * under a branch (a guard of a bound loop shorter than the launch, or any if). */
static int check_barriers(const LaunchScan *L, const Stmt *s, const int64_t *launch, const char *branch)
{
    if (!s)
        return 0;
    switch (s->kind) {
    case S_FOR: {
        int slot = s->u.loop.kind == FOR_BOUND ? bind_slot(s->u.loop.bind_tag) : -1;
        int64_t ext = 0;
        if (slot >= 0 && ir_expr_is_const(s->u.loop.extent, &ext) && ext < launch[slot] && !branch)
            branch = s->u.loop.var->name;
        return check_barriers(L, s->u.loop.body, launch, branch);
    }
    case S_LET: return check_barriers(L, s->u.let.body, launch, branch);
    case S_IF:
        return check_barriers(L, s->u.cond.then, launch, branch ? branch : "an if") ||
               check_barriers(L, s->u.cond.els, launch, branch ? branch : "an if");
    case S_ALLOC: return check_barriers(L, s->u.alloc.body, launch, branch);
    case S_SEQ:
        for (int i = 0; i < s->u.seq.n; i++)
            if (check_barriers(L, s->u.seq.items[i], launch, branch))
                return -1;
        return 0;
    case S_BARRIER:
        if (branch)
            return ir_fail("kernel %s: a barrier under divergent control flow (inside the guard of %s): not every "
                           "thread of a block would reach it; make the bound loops cover the block exactly",
                           L->k->name, branch);
        return 0;
    default: return 0;
    }
}

/* Declare the shared arrays of a launch at the top of its function (OpenCL and Metal
 * allow them nowhere else). */
static void hoist_shared(Printer *P, const Stmt *s)
{
    if (!s)
        return;
    switch (s->kind) {
    case S_FOR: hoist_shared(P, s->u.loop.body); break;
    case S_LET: hoist_shared(P, s->u.let.body); break;
    case S_IF:
        hoist_shared(P, s->u.cond.then);
        hoist_shared(P, s->u.cond.els);
        break;
    case S_ALLOC:
        if (s->u.alloc.buf->scope == SCOPE_SHARED) {
            const Buffer *b = s->u.alloc.buf;
            line(P);
            sb_printf(P->out, "%s %s %s[%lld];\n", P->d->local_qual, ir_dtype_ctype(b->dtype), buf_name(P, b),
                      (long long)(b->size > 0 ? b->size : 1));
        }
        hoist_shared(P, s->u.alloc.body);
        break;
    case S_SEQ:
        for (int i = 0; i < s->u.seq.n; i++)
            hoist_shared(P, s->u.seq.items[i]);
        break;
    default: break;
    }
}

void em_free_launches(EmLaunch *l, int n)
{
    for (int i = 0; l && i < n; i++)
        free(l[i].name);
    free(l);
}

int em_print_gpu_kernel(StrBuf *out, const Kernel *k, const Dialect *d, const Target *t, EmLaunch **launches)
{
    /* the launches: the top-level statements below the workspace allocations */
    const Stmt *body = k->body;
    PtrVec ws = {0};
    while (body && body->kind == S_ALLOC && body->u.alloc.buf->scope == SCOPE_WORKSPACE) {
        ir_vec_push(&ws, (void *)body->u.alloc.buf, 1 << 20, "workspace buffers");
        body = body->u.alloc.body;
    }
    const Stmt *const *items = &body;
    int nitems = 1;
    if (body && body->kind == S_SEQ) {
        items = (const Stmt *const *)body->u.seq.items;
        nitems = body->u.seq.n;
    }
    int n = 0;
    for (int i = 0; i < nitems; i++)
        n += items[i] && items[i]->kind != S_COMMENT;
    EmLaunch *L = calloc((size_t)(n ? n : 1), sizeof *L);
    if (!L)
        ir_die("out of memory");
    *launches = L;

    Printer P;
    StrBuf text = {0};
    printer_init(&P, &text, k, d, 1);
    int li = 0, rc = 0;
    for (int i = 0; i < nitems && rc == 0; i++) {
        const Stmt *item = items[i];
        if (!item || item->kind == S_COMMENT)
            continue;
        LaunchScan S = {.k = k, .t = t};
        if (scan_launch(&S, item)) {
            rc = -1;
            break;
        }
        if (S.f64 && d->no_f64) {
            rc = ir_fail("kernel %s: %s has no 64-bit floats (the kernel computes in f64)", k->name, d->name);
            break;
        }
        for (int j = 0; j < 6; j++)
            P.launch[j] = S.ext[j] ? S.ext[j] : 1;
        if (S.barriers && check_barriers(&S, item, P.launch, NULL)) {
            rc = -1;
            break;
        }
        int64_t threads = P.launch[3] * P.launch[4] * P.launch[5];
        if (threads > t->max_threads) {
            rc = ir_fail("kernel %s: %lld threads per block, above the target's limit of %d (-max-threads)", k->name,
                         (long long)threads, t->max_threads);
            break;
        }
        if (P.launch[0] > INT32_MAX || P.launch[1] > 65535 || P.launch[2] > 65535 || P.launch[5] > 64) {
            rc = ir_fail("kernel %s: a grid of %lld x %lld x %lld blocks of %lld x %lld x %lld threads is beyond what "
                         "GPUs launch (blocks: x < 2^31, y and z <= 65535; threads: z <= 64)", k->name,
                         (long long)P.launch[0], (long long)P.launch[1], (long long)P.launch[2], (long long)P.launch[3],
                         (long long)P.launch[4], (long long)P.launch[5]);
            break;
        }
        if (S.shared > t->max_shared) {
            rc = ir_fail("kernel %s: %lld bytes of shared memory per block, above the target's limit of %lld "
                         "(-max-shared)", k->name, (long long)S.shared, (long long)t->max_shared);
            break;
        }
        EmLaunch *l = &L[li];
        if (n == 1) {
            l->name = xstrdup(P.fname);
        } else {
            l->name = xmalloc(strlen(P.fname) + 24);
            sprintf(l->name, "%s_%d", P.fname, li);
        }
        for (int j = 0; j < 3; j++) {
            l->grid[j] = P.launch[j];
            l->block[j] = P.launch[3 + j];
        }
        l->shared_bytes = S.shared;
        P.launch_name = l->name;

        /* header comment: the kernel's name and notes (on its first launch), the grid */
        sb_puts(&text, "/* ");
        em_c_comment(&text, k->name);
        if (n > 1)
            sb_printf(&text, ", launch %d of %d", li + 1, n);
        for (int j = 0; li == 0 && j < k->notes.n; j++) {
            const char *note = k->notes.items[j];
            sb_puts(&text, note && note[0] ? "\n * " : "\n *");
            em_c_comment(&text, note);
        }
        sb_printf(&text, "\n * grid %lld x %lld x %lld blocks of %lld x %lld x %lld threads%s\n */\n",
                  (long long)l->grid[0], (long long)l->grid[1], (long long)l->grid[2], (long long)l->block[0],
                  (long long)l->block[1], (long long)l->block[2],
                  threads == 1 && l->grid[0] * l->grid[1] * l->grid[2] == 1 ? " (not parallelized: one thread)" : "");
        print_proto(&P);
        sb_puts(&text, "\n{\n");
        P.depth = 1;
        int wsused = 0;
        for (int j = 0; j < ws.n; j++)
            wsused |= stmt_refs(item, ws.items[j]);
        if (!k->internal && !wsused) {
            line(&P);
            sb_puts(&text, "(void)workspace;\n");
        }
        for (int j = 0; j < k->params.n; j++) {
            const Buffer *b = k->params.items[j];
            if (!stmt_refs(item, b)) {
                line(&P);
                sb_printf(&text, "(void)%s;\n", buf_name(&P, b));
            }
        }
        hoist_shared(&P, item);
        Stmt *wrapped = (Stmt *)item;
        for (int j = ws.n - 1; j >= 0; j--)
            if (stmt_refs(item, ws.items[j]))
                wrapped = ir_allocate(ws.items[j], wrapped);
        stmt(&P, wrapped);
        pop_decls(&P, 0);
        sb_puts(&text, "}\n");
        li++;
        if (li < n)
            sb_puts(&text, "\n");
    }
    if (rc == 0)
        put_lowbit(out, k);
    if (rc == 0 && text.len)
        sb_puts(out, text.data);
    sb_free(&text);
    printer_free(&P);
    if (rc) {
        em_free_launches(L, li);
        *launches = NULL;
        return -1;
    }
    return n;
}
