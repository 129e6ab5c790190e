/* cprint.c - the one C-family printer: a Kernel of loop IR as a C function (and, through
 * the Dialect table, as a CUDA, OpenCL or Metal kernel).
 *
 * requires: a lowered kernel (no E_ACCESS / E_REDUCE); breaks: nothing (reads only)
 *
 * The output is meant to be reviewed by a person: minimal parentheses (but never the
 * ones gcc's -Wparentheses asks for), loop variables keep their IR names unless C scoping
 * forces a suffix, constants are spelled the shortest way that round-trips. The same
 * kernel always prints the same bytes: names depend only on the IR and its order.
 * The statement walk, scopes and identifiers are printer.c's (this file gives its hooks);
 * the dialect tables are dialect.c's; a GPU kernel's launches, the gpu-launch pass's.
 */
#include "cfamily.h"
#include "printer.h"
#include "../lower/launch.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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

char *em_c_func_name(const Kernel *k)
{
    char *s = em_ident_base(k->name, "v", 1);
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

/* Declarations are bindings (printer.h): a Var (live while its IR scope lasts) or a
 * Buffer (never looked up in decls; kept so that a second declaration in the same block
 * is noticed). */
typedef struct {
    EmPrinter em;          /* the output, the indentation, the statement hooks */
    const Dialect *d;
    const Kernel *k;
    char *fname;           /* the function's name */
    EmScope bufs;          /* every buffer of the kernel, with its kernel-wide name */
    EmScope decls;         /* declarations of the open C blocks, innermost last */
    /* GPU launches */
    const LowerLaunch *launch;   /* the launch printed (its grid and block) */
    const char *proto_name;    /* the name print_proto gives the function instead of fname:
                                  a GPU launch's, a parallel loop body's; NULL: fname */
    int dims_mark;             /* decls[0, dims_mark) are the run-time dims, kernel parameters */
    const char *lead_param;    /* a parameter before the buffers (a parallel loop body's
                                  iteration, "int32_t i"), or NULL */
    const char *fn_attr;       /* printed between "static" and "void" (KGEN_PARALLEL_BODY) */
    /* expressions of the run-time dims alone, computed once at the top of the function
     * (print_body) and printed as their names; the first nhoist_live of them are visible */
    PtrVec hoist;              /* Expr* */
    PtrVec hoist_vars;         /* Var*: their names in decls */
    int nhoist_live;
    unsigned char *hoist_used; /* hoist_used[i]: hoist[i]'s name was printed */
} Printer;

/* Leave C blocks down to `mark` declarations. */
static void pop_decls(Printer *P, int mark) { em_scope_pop(&P->decls, mark, 1); }

static int name_taken(void *ctx, const char *s)
{
    const Printer *P = ctx;
    if (is_reserved(s) || (P->fname && strcmp(s, P->fname) == 0))
        return 1;
    for (size_t i = 0; !is_host(P->d) && i < sizeof gpu_reserved_words / sizeof *gpu_reserved_words; i++)
        if (strcmp(s, gpu_reserved_words[i]) == 0)
            return 1;
    return em_scope_has_name(&P->bufs, s) || em_scope_has_name(&P->decls, s);
}

/* The sanitized name, or with the first free suffix _1, _2, ... */
static char *unique_name(Printer *P, const char *raw)
{
    char *base = em_ident_base(raw, "v", 1);
    char *s = em_unique_name(base, name_taken, P);
    free(base);
    return s;
}

static void add_buffer(Printer *P, const Buffer *b)
{
    if (b && !em_scope_find(&P->bufs, b, 0))
        em_scope_push(&P->bufs, b, unique_name(P, b->name), 0);
}

/* buffer collection, in printing order: loads, stores, prefetches, allocations */
static int collect_expr_buffer(const Expr *e, void *P)
{
    if (e->kind == E_LOAD)
        add_buffer(P, e->u.load.buf);
    return 0;
}

static int collect_stmt_buffer(const Stmt *s, void *P)
{
    if (s->kind == S_STORE || s->kind == S_PREFETCH)
        add_buffer(P, s->u.store.buf);
    else if (s->kind == S_ALLOC)
        add_buffer(P, s->u.alloc.buf);
    return 0;
}

static void collect_buffers(Printer *P, const Stmt *s)
{
    em_stmt_any(s, collect_stmt_buffer, collect_expr_buffer, P);
}

static const EmStmtHooks c_hooks;

/* Names are fixed before anything is printed, in a deterministic order: the function,
 * the parameters, then the other buffers as the body meets them. */
static void printer_init(Printer *P, StrBuf *out, const Kernel *k, const Dialect *d, int body)
{
    memset(P, 0, sizeof *P);
    P->em.out = out;
    P->em.hooks = &c_hooks;
    P->k = k;
    P->d = d;
    P->fname = em_c_func_name(k);
    for (int i = 0; i < k->params.n; i++)
        add_buffer(P, k->params.items[i]);
    /* the run-time dims: parameters after the buffers, visible everywhere */
    for (int i = 0; i < k->dims.n; i++)
        em_scope_push(&P->decls, k->dims.items[i], unique_name(P, ((Var *)k->dims.items[i])->name), 1);
    P->dims_mark = P->decls.n;
    if (body) {
        collect_buffers(P, k->body);
        for (int i = 0; i < k->locals.n; i++)
            add_buffer(P, k->locals.items[i]);
    }
}

static void printer_free(Printer *P)
{
    pop_decls(P, 0);
    em_scope_pop(&P->bufs, 0, 1);
    free(P->bufs.items);
    free(P->decls.items);
    free(P->fname);
}

static const char *buf_name(const Printer *P, const Buffer *b)
{
    const EmBinding *x = em_scope_find(&P->bufs, b, 0);
    if (!x)
        ir_die("cprint: buffer %s was not collected", b ? b->name : "(null)");
    return x->name;
}

static const char *var_name(const Printer *P, const Var *v)
{
    const EmBinding *x = em_scope_find(&P->decls, v, 1);
    if (!x)
        ir_die("cprint: variable %s used outside its loop or let", v ? v->name : "(null)");
    return x->name;
}

/* Declare v in the current C block, not yet visible (its own initializer may refer to an
 * outer binding of the same Var). Returns the index to make live. */
static int declare_var(Printer *P, const Var *v) { return em_scope_push(&P->decls, v, unique_name(P, v->name), 0); }


/* ---------------------------------------------------------------- uses */

static int expr_refs(const Expr *e, void *key)
{
    return (e->kind == E_VAR && e->u.var == key) || (e->kind == E_LOAD && e->u.load.buf == key);
}

/* Does s mention the Var or Buffer `key`? (Decides the (void)x; lines that keep
 * -Wunused quiet.) */
static int stmt_refs_node(const Stmt *s, void *key)
{
    return (s->kind == S_STORE || s->kind == S_PREFETCH) && s->u.store.buf == key;
}

static int stmt_refs(const Stmt *s, const void *key)
{
    return em_stmt_any(s, stmt_refs_node, expr_refs, (void *)key);
}


/* "(void)x;" for each of the kernel's buffers that the function body s does not use */
static void void_unused_params(Printer *P, const Stmt *s)
{
    for (int i = 0; i < P->k->params.n; i++) {
        const Buffer *b = P->k->params.items[i];
        if (!stmt_refs(s, b)) {
            em_line(&P->em);
            sb_printf(P->em.out, "(void)%s;\n", buf_name(P, b));
        }
    }
    for (int i = 0; i < P->k->dims.n; i++)
        if (!ir_stmt_uses_var(s, P->k->dims.items[i])) {
            em_line(&P->em);
            sb_printf(P->em.out, "(void)%s;\n", var_name(P, P->k->dims.items[i]));
        }
}

static int is_workspace_alloc(const Stmt *s, void *ctx)
{
    (void)ctx;
    return s->kind == S_ALLOC && s->u.alloc.buf->scope == SCOPE_WORKSPACE;
}

static int uses_workspace(const Stmt *s) { return em_stmt_any(s, is_workspace_alloc, NULL, NULL); }

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

/* A packed element's code (kgen_lowbit.h): KGEN_U4(buf, index), sign-extended for i4, i2 */
static void packed_code(Printer *P, const Buffer *b, const Expr *index, int raw)
{
    int bits = ir_dtype_bits(b->dtype);
    sb_printf(P->em.out, "KGEN_%c%d(%s, ", !raw && ir_dtype_is_signed(b->dtype) && !ir_dtype_is_float(b->dtype) ? 'I' : 'U',
              bits, buf_name(P, b));
    expr(P, index, P_NONE);
    sb_puts(P->em.out, ")");
}

/* buf[index], or the bare name of a scalar */
static void element(Printer *P, const Buffer *b, const Expr *index)
{
    sb_puts(P->em.out, buf_name(P, b));
    if (em_is_scalar(b))
        return;
    sb_puts(P->em.out, "[");
    expr(P, index, P_NONE);
    sb_puts(P->em.out, "]");
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
    sb_puts(P->em.out, em_math_name(P->d, fn, t, buf, sizeof buf));
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
    StrBuf *o = P->em.out;
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
        sb_puts(P->em.out, "NAN");
        return;
    }
    if (isinf(v)) {
        sb_puts(P->em.out, v > 0 ? "INFINITY" : "-INFINITY");
        return;
    }
    em_shortest_g(buf, sizeof buf, v, f32, 7);     /* whole numbers below 1e7 spelled out */
    if (!strpbrk(buf, ".e"))
        strcat(buf, ".0");
    sb_puts(P->em.out, buf);
    if (f32)
        sb_puts(P->em.out, "f");
}

/* Print e, and wrap it in parentheses when its text would start with '-' (after a
 * binary '-', a unary '-' or a cast, "- -x" and "(float)-x" read badly). */
static void expr_nominus(Printer *P, const Expr *e, int prec)
{
    StrBuf tmp = {0}, *save = P->em.out;
    P->em.out = &tmp;
    expr(P, e, prec);
    P->em.out = save;
    if (tmp.len && tmp.data[0] == '-')
        sb_printf(P->em.out, "(%s)", tmp.data);
    else if (tmp.len)
        sb_puts(P->em.out, tmp.data);
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

/* Is e a float constant that is not NaN? */
static int float_bound(const Expr *e)
{
    return e->kind == E_FLOAT && e->u.fval == e->u.fval;
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
        sb_printf(P->em.out, " %s ", tok);
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
        /* a float bound that is a constant, not NaN (ReLU's 0, Clip's 6): the helper
         * without the bound's NaN test, the constant second */
        if (!strcmp(minmax_suffix(t), "f32") && (float_bound(a) || float_bound(b))) {
            if (float_bound(a)) {
                const Expr *k = a;
                a = b, b = k;
            }
            sb_printf(P->em.out, "kgen_%s_f32k(", op == OP_MIN ? "min" : "max");
            break;
        }
        sb_printf(P->em.out, "kgen_%s_%s(", op == OP_MIN ? "min" : "max", minmax_suffix(t));
        break;
    case OP_MOD: sb_printf(P->em.out, "%s(", f64 ? "fmod" : P->d->fmod_f32); break;
    case OP_FLOORDIV:
        if (ir_dtype_is_float(t)) {       /* floor(a / b) */
            put_math_name(P, FN_FLOOR, t);
            sb_puts(P->em.out, "(");
            expr(P, a, P_MUL);
            sb_puts(P->em.out, " / ");
            expr(P, b, P_MUL + 1);
            sb_puts(P->em.out, ")");
            return;
        }
        sb_printf(P->em.out, "kgen_floordiv_%s(", t == DT_I64 ? "i64" : "i32");
        break;
    case OP_FLOORMOD:
        if (ir_dtype_is_float(t))
            sb_puts(P->em.out, f64 ? "kgen_floormod(" : "kgen_floormodf(");
        else
            sb_printf(P->em.out, "kgen_floormod_%s(", t == DT_I64 ? "i64" : "i32");
        break;
    default: ir_die("cprint: binary operator %d", (int)op);
    }
    expr(P, a, P_NONE);
    sb_puts(P->em.out, ", ");
    expr(P, b, P_NONE);
    sb_puts(P->em.out, ")");
}

static void print_call(Printer *P, const Expr *e)
{
    MathFn fn = e->u.call.fn;
    const Expr *a0 = e->u.call.args[0];
    DType t = a0->dtype;
    if (!ir_dtype_is_float(t)) {
        if (fn != FN_ABS)
            ir_die("cprint: %s of an integer", ir_mathfn_name(fn));
        sb_printf(P->em.out, "kgen_abs_%s(", t == DT_I64 ? "i64" : "i32");
        expr(P, a0, P_NONE);
        sb_puts(P->em.out, ")");
        return;
    }
    int pred = fn == FN_ISNAN || fn == FN_ISINF;   /* nonzero int, not necessarily 1 */
    if (pred)
        sb_puts(P->em.out, "(");
    put_math_name(P, fn, t);
    sb_puts(P->em.out, "(");
    for (int i = 0; i < KG_MAX_ARGS && e->u.call.args[i]; i++) {
        if (i)
            sb_puts(P->em.out, ", ");
        expr(P, e->u.call.args[i], P_NONE);
    }
    sb_puts(P->em.out, pred ? ") != 0)" : ")");
}

static void print_cast(Printer *P, const Expr *e)
{
    const Expr *a = e->u.cast.a;
    DType from = a->dtype, to = e->dtype;
    if (to == DT_BOOL) {
        sb_puts(P->em.out, "(");
        expr(P, a, P_REL);
        sb_puts(P->em.out, " != 0)");
    } else if (ir_dtype_is_storage(to)) {
        /* a value cast to f16 (bf16, float8) takes its precision; it stays a float afterwards */
        sb_printf(P->em.out, "kgen_%s_to_f32(kgen_f32_to_%s(", ir_dtype_name(to), ir_dtype_name(to));
        if (from == DT_F32 || ir_dtype_is_storage(from))
            expr(P, a, P_NONE);
        else {
            sb_puts(P->em.out, "(float)");
            expr_nominus(P, a, P_UNARY);
        }
        sb_puts(P->em.out, "))");
    } else if (ir_dtype_is_packed(to)) {
        /* wrapped into the type's range, as a store would (Cast computes its saturation) */
        sb_printf(P->em.out, "KGEN_WRAP_%s(", to == DT_I4 ? "I4" : to == DT_U4 ? "U4" : to == DT_I2 ? "I2" : "U2");
        if (ir_dtype_is_float(from)) {
            sb_puts(P->em.out, "(int32_t)");
            expr_nominus(P, a, P_UNARY);
        } else {
            expr(P, a, P_NONE);
        }
        sb_puts(P->em.out, ")");
    } else {
        sb_printf(P->em.out, "(%s)", value_type(to));
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
    StrBuf *o = P->em.out;
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
    StrBuf *o = P->em.out;
    for (int i = 0; i < P->nhoist_live; i++)
        if (ir_expr_equal(e, P->hoist.items[i])) {
            sb_puts(o, var_name(P, P->hoist_vars.items[i]));
            P->hoist_used[i] = 1;
            return;
        }
    int paren = expr_prec(e) < prec;
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

/* KGEN_SET4(buf, index, code): a read-modify-write of the element's byte (kgen_lowbit.h;
 * the lowering keeps the loops around it serial). The macro keeps the code's low bits,
 * so a wrap to the type right before the store is left out; a copy moves the code. */
static void print_packed_store(Printer *P, const Buffer *b, const Expr *index, const Expr *v)
{
    StrBuf *o = P->em.out;
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

static void put_index(Printer *P, int slot)
{
    const char *fmt = slot < 3 ? P->d->block_index : P->d->thread_index;
    int axis = slot % 3;
    if (strstr(fmt, "%c"))
        sb_printf(P->em.out, fmt, "xyz"[axis]);
    else
        sb_printf(P->em.out, fmt, axis);
}

/* A loop bound to a GPU index: no loop, the index itself (and a guard where the launch has
 * more blocks or threads than this loop has iterations). */
static void print_bound(Printer *P, const Stmt *s)
{
    Var *v = s->u.loop.var;
    int slot = lower_launch_slot(s->u.loop.bind_tag);
    int64_t ext = 0;
    int di = declare_var(P, v);
    const char *name = P->decls.items[di].name;
    em_line(&P->em);
    sb_printf(P->em.out, "const %s %s = (%s)", value_type(v->dtype), name, value_type(v->dtype));
    put_index(P, slot);
    sb_puts(P->em.out, ";");
    sb_puts(P->em.out, " /* ");
    em_comment_text(P->em.out, s->u.loop.bind_tag);
    sb_puts(P->em.out, " */\n");
    P->decls.items[di].live = 1;
    if (lower_launch_guarded(P->launch, slot, s->u.loop.extent)) {
        em_line(&P->em);
        sb_printf(P->em.out, "if (%s < ", name);
        if (ir_expr_is_const(s->u.loop.extent, &ext))
            print_int(P, ext, v->dtype);
        else
            expr(P, s->u.loop.extent, P_REL + 1);
        sb_puts(P->em.out, ") {\n");
        em_block(&P->em, s->u.loop.body);
        em_line(&P->em);
        sb_puts(P->em.out, "}\n");
    } else {
        em_stmt(&P->em, s->u.loop.body);
    }
    /* declared in the enclosing C block: the name stays taken until that block closes (a
     * second cooperative copy binds the same index again) */
    P->decls.items[di].live = 0;
}

/* &buf[index], or the bare name at index 0 */
static void address(Printer *P, const Buffer *b, Expr *index)
{
    int64_t v;
    index = ir_simplify(index, NULL);
    if (ir_expr_is_const(index, &v) && v == 0) {
        sb_puts(P->em.out, buf_name(P, b));
        return;
    }
    sb_puts(P->em.out, "&");
    element(P, b, index);
}

/* A tensorized loop (ir/tensorize.c): one call of a kgen_ukernels.h micro-kernel per chunk.
 * An elementwise update whose factor is zero padding on a condition the loop does not
 * change reads it from kgen_zero_f32() where the condition fails: the call then loads its
 * vectors unconditionally (clang left such updates scalar, with a branch per element). */
static void print_tensorized(Printer *P, const IrTzCall *c)
{
    int64_t off = 0;
    for (int i = 0; i < c->nchunks; i++) {
        em_line(&P->em);
        sb_printf(P->em.out, "kgen_fma%s_f32x%d(", c->elem ? "" : "_bcast", c->width[i]);
        address(P, c->acc, ir_add(c->acc_index, ir_idx(off)));
        sb_puts(P->em.out, ", ");
        if (!c->elem) {
            expr(P, c->scalar, P_NONE);
        } else if (c->a_cond) {
            expr(P, c->a_cond, P_LOR);
            sb_puts(P->em.out, " ? ");
            address(P, c->a, ir_add(c->a_index, ir_idx(off)));
            sb_puts(P->em.out, " : kgen_zero_f32()");
        } else {
            address(P, c->a, ir_add(c->a_index, ir_idx(off)));
        }
        sb_puts(P->em.out, ", ");
        address(P, c->b, ir_add(c->b_index, ir_idx(off)));
        sb_puts(P->em.out, ");\n");
        off += c->width[i];
    }
}

static int is_tensorized(const Stmt *s, void *ctx)
{
    (void)ctx;
    return s->kind == S_FOR && s->u.loop.kind == FOR_TENSORIZED;
}

int em_c_uses_ukernels(const Stmt *s) { return em_stmt_any(s, is_tensorized, NULL, NULL); }

void em_c_vectorize_pragma(StrBuf *o)
{
    sb_puts(o, "/* clang runs a loop marked KGEN_VECTORIZE that it cannot vectorize as written */\n"
               "#if defined(__clang__)\n#pragma clang diagnostic ignored \"-Wpass-failed\"\n#endif\n");
}

/* a tensorized loop that broadcasts (a register tile of a conv or matmul), not an
 * elementwise one (a depthwise conv's window) */
static int is_bcast_tensorized(const Stmt *s, void *ctx)
{
    IrTzCall call;
    (void)ctx;
    return is_tensorized(s, NULL) && !(ir_tensorize_match(s, &call) && call.elem);
}

/* Does s call the broadcasting micro-kernels? Their kernels keep the tuning's vector width
 * (KGEN_WIDE_VECTORS, on the others). */
static int uses_bcast_ukernels(const Stmt *s) { return em_stmt_any(s, is_bcast_tensorized, NULL, NULL); }

static void print_for(EmPrinter *E, const Stmt *s)
{
    Printer *P = (Printer *)E;
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
        em_line(&P->em);
        sb_puts(P->em.out, "KGEN_VECTORIZE\n");
    } else if (kind == FOR_PARALLEL && d->has_openmp) {
        em_line(&P->em);
        sb_puts(P->em.out, "KGEN_PARALLEL_FOR\n");
    }

    int mark = P->decls.n;
    int di = declare_var(P, v);
    const char *name = P->decls.items[di].name;
    em_line(&P->em);
    sb_printf(P->em.out, "for (%s %s = ", value_type(v->dtype), name);
    expr(P, min, P_NONE);
    sb_printf(P->em.out, "; %s < ", name);
    if (lo_const && lo == 0) {
        expr(P, ext, P_REL + 1);
    } else if (lo_const && ext_const) {
        print_int(P, lo + n, v->dtype);
    } else {
        expr(P, min, P_ADD);
        sb_puts(P->em.out, " + ");
        expr_nominus(P, ext, P_ADD + 1);
    }
    sb_printf(P->em.out, "; ++%s) {", name);
    P->decls.items[di].live = 1;

    if (kind == FOR_UNROLLED)
        sb_puts(P->em.out, " /* unrolled */");
    else if (kind == FOR_BOUND) {
        sb_puts(P->em.out, " /* ");
        em_comment_text(P->em.out, s->u.loop.bind_tag ? s->u.loop.bind_tag : "bound");
        sb_puts(P->em.out, " */");
    } else if (kind == FOR_PARALLEL && !d->has_openmp)
        sb_puts(P->em.out, " /* parallel */");
    else if (kind == FOR_VECTORIZED && !is_host(d))
        sb_puts(P->em.out, " /* vectorized */");
    sb_puts(P->em.out, "\n");

    size_t start = P->em.out->len;
    P->em.depth++;
    em_stmt(&P->em, s->u.loop.body);
    P->em.depth--;
    int long_body = count_lines(P->em.out, start) > LONG_BODY;
    em_line(&P->em);
    if (long_body)
        sb_printf(P->em.out, "} /* %s */\n", P->decls.items[di].name);
    else
        sb_puts(P->em.out, "}\n");
    pop_decls(P, mark);
}

/* if_head: host C marks where the lowering knows the branch is the usual one (gcc takes a
 * bounds check's && chain as unlikely and does not vectorize a loop inside it) */
static void c_if_head(EmPrinter *E, const Stmt *s)
{
    Printer *P = (Printer *)E;
    int likely = s->u.cond.likely && is_host(P->d);
    sb_puts(E->out, likely ? "if (KGEN_LIKELY(" : "if (");
    expr(P, s->u.cond.cond, P_NONE);
    sb_puts(E->out, likely ? ")) {\n" : ") {\n");
}

static void print_alloc(EmPrinter *E, const Stmt *s)
{
    Printer *P = (Printer *)E;
    const Buffer *b = s->u.alloc.buf;
    const Dialect *d = P->d;
    if (b->scope == SCOPE_SHARED && !is_host(d)) {
        em_stmt(&P->em, s->u.alloc.body);     /* declared at the top of the kernel (hoist_shared) */
        return;
    }
    const char *name = buf_name(P, b);
    const char *ty = ir_dtype_ctype(b->dtype);
    /* the same buffer allocated twice in one C block needs a block of its own */
    int braces = em_scope_find(&P->decls, b, 0) != NULL;
    int mark = P->decls.n;
    if (braces) {
        em_line(&P->em);
        sb_puts(P->em.out, "{\n");
        P->em.depth++;
    }
    em_scope_push(&P->decls, b, em_strdup(name), 0);

    em_line(&P->em);
    switch (b->scope) {
    case SCOPE_WORKSPACE: {
        const char *q = d->global_qual ? d->global_qual : "";
        const char *sp = d->global_qual ? " " : "";
        const char *rk = d->restrict_kw ? d->restrict_kw : "";
        sb_printf(P->em.out, "%s%s%s *%s%s%s = ", q, sp, ty, rk, d->restrict_kw ? " " : "", name);
        if (b->ws_offset == 0)
            sb_printf(P->em.out, "(%s%s%s *)workspace;\n", q, sp, ty);
        else
            sb_printf(P->em.out, "(%s%s%s *)((%s%sunsigned char *)workspace + %lld);\n", q, sp, ty, q,
                      sp, (long long)b->ws_offset);
        break;
    }
    case SCOPE_LOCAL:
    case SCOPE_SHARED: {
        long long size = b->size > 0 ? (long long)b->size : 1;
        if (b->scope == SCOPE_SHARED && d->local_qual)
            sb_printf(P->em.out, "%s %s %s[%lld];\n", d->local_qual, ty, name, size);
        else if (em_is_scalar(b))
            sb_printf(P->em.out, "%s %s;\n", ty, name);
        else if (is_host(d))
            sb_printf(P->em.out, "KGEN_ALIGN(64) %s %s[%lld];\n", ty, name, size);
        else
            sb_printf(P->em.out, "%s %s[%lld];\n", ty, name, size);
        break;
    }
    case SCOPE_PARAM: ir_die("cprint: allocation of parameter %s", b->name);
    }
    if (!stmt_refs(s->u.alloc.body, b)) {
        em_line(&P->em);
        sb_printf(P->em.out, "(void)%s;\n", name);
    }
    em_stmt(&P->em, s->u.alloc.body);
    if (braces) {
        pop_decls(P, mark);
        P->em.depth--;
        em_line(&P->em);
        sb_puts(P->em.out, "}\n");
    }
}

static void c_let(EmPrinter *E, const Stmt *s)
{
    Printer *P = (Printer *)E;
    Var *v = s->u.let.var;
    int di = declare_var(P, v);
    em_line(E);
    sb_printf(E->out, "const %s %s = ", value_type(v->dtype), P->decls.items[di].name);
    expr(P, s->u.let.value, P_NONE);
    sb_puts(E->out, ";\n");
    P->decls.items[di].live = 1;
    if (!stmt_refs(s->u.let.body, v)) {
        em_line(E);
        sb_printf(E->out, "(void)%s;\n", P->decls.items[di].name);
    }
    em_stmt(E, s->u.let.body);
    P->decls.items[di].live = 0;    /* its C name stays taken until the block closes */
}

static void c_store(EmPrinter *E, const Stmt *s)
{
    Printer *P = (Printer *)E;
    StrBuf *o = E->out;
    const Buffer *b = s->u.store.buf;
    em_line(E);
    if (ir_dtype_is_packed(b->dtype)) {
        print_packed_store(P, b, s->u.store.index, transparent(s->u.store.value));
        return;
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
}

static void c_barrier(EmPrinter *E, const Stmt *s)
{
    const Printer *P = (const Printer *)E;
    (void)s;
    if (P->d->barrier) {
        em_line(E);
        sb_printf(E->out, "%s\n", P->d->barrier);
    }
}

static void c_prefetch(EmPrinter *E, const Stmt *s)
{
    Printer *P = (Printer *)E;
    if (P->d->prefetch) {
        em_line(E);
        sb_printf(E->out, "%s(&", P->d->prefetch);
        element(P, s->u.store.buf, s->u.store.index);
        sb_puts(E->out, ");\n");
    }
}

static int c_scope_mark(EmPrinter *E) { return ((Printer *)E)->decls.n; }
static void c_scope_pop(EmPrinter *E, int mark) { pop_decls((Printer *)E, mark); }

static const EmStmtHooks c_hooks = {
    .loop = print_for,
    .let = c_let,
    .store = c_store,
    .alloc = print_alloc,
    .barrier = c_barrier,
    .prefetch = c_prefetch,
    .if_head = c_if_head,
    .scope_mark = c_scope_mark,
    .scope_pop = c_scope_pop,
};

/* ---------------------------------------------------------------- functions */

/* Parameters on one line while the prototype fits in this many columns, else one a line. */
#define PROTO_WIDTH 120


static void print_proto(Printer *P)
{
    const Kernel *k = P->k;
    const Dialect *d = P->d;
    const char *rk = d->restrict_kw;
    char **items = xmalloc(sizeof *items * (size_t)(k->params.n + k->dims.n + 3));
    int n = 0;
    size_t total = 0;

    int nparams = k->internal ? k->params.n : k->params.n + 1;
    if (P->lead_param) {
        items[n] = em_strdup(P->lead_param);
        total += strlen(items[n++]) + 2;
    }
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

    for (int i = 0; i < k->dims.n; i++) {
        StrBuf p = {0};
        sb_printf(&p, d->scalar_param ? d->scalar_param : "%s %s", value_type(DT_INDEX), var_name(P, k->dims.items[i]));
        if (d->scalar_param && d->buffer_attr)
            sb_printf(&p, d->buffer_attr, nparams + i);
        items[n++] = p.data;
        total += p.len + 2;
    }
    if (d->index_params) {
        items[n] = em_strdup(d->index_params);
        total += strlen(items[n++]) + 2;
    }

    StrBuf *o = P->em.out;
    const char *fname = P->proto_name ? P->proto_name : P->fname;
    if (d->kernel_prefix) {
        sb_puts(o, d->kernel_prefix);
        if (d->launch_bounds && P->proto_name) {
            sb_puts(o, " ");
            const char *f = d->launch_bounds;
            if (strstr(f, "%lld") != strrchr(f, '%'))     /* x, y, z */
                sb_printf(o, f, (long long)P->launch->ext[3], (long long)P->launch->ext[4], (long long)P->launch->ext[5]);
            else
                sb_printf(o, f, (long long)(P->launch->ext[3] * P->launch->ext[4] * P->launch->ext[5]));
        }
        sb_printf(o, " %s(", fname);
    } else {
        if (k->internal)
            sb_puts(o, "static ");
        if (P->fn_attr)
            sb_printf(o, "%s ", P->fn_attr);
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

static int expr_lowbit(const Expr *e, void *ctx)
{
    (void)ctx;
    return lowbit_type(e->dtype) || (e->kind == E_LOAD && lowbit_type(e->u.load.buf->dtype));
}

static int stmt_lowbit_node(const Stmt *s, void *ctx)
{
    (void)ctx;
    return (s->kind == S_STORE && lowbit_type(s->u.store.buf->dtype)) ||
           (s->kind == S_ALLOC && lowbit_type(s->u.alloc.buf->dtype));
}

static int stmt_lowbit(const Stmt *s) { return em_stmt_any(s, stmt_lowbit_node, expr_lowbit, NULL); }

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

/* ---------------------------------------------------------------- run-time dims, once */

/* Is e index arithmetic of the run-time dims alone (nothing that could trap: a division
 * only by a positive constant)? */
static int dims_only(const Expr *e)
{
    switch (e->kind) {
    case E_INT: return !ir_dtype_is_float(e->dtype);
    case E_VAR: return e->u.var->is_dim;
    case E_UN: return e->u.un.op == UN_NEG && dims_only(e->u.un.a);
    case E_BIN:
        switch (e->u.bin.op) {
        case OP_ADD:
        case OP_SUB:
        case OP_MUL:
        case OP_MIN:
        case OP_MAX: return !ir_dtype_is_float(e->dtype) && dims_only(e->u.bin.a) && dims_only(e->u.bin.b);
        case OP_DIV:
        case OP_MOD:
        case OP_FLOORDIV:
        case OP_FLOORMOD:
            return !ir_dtype_is_float(e->dtype) && dims_only(e->u.bin.a) && e->u.bin.b->kind == E_INT &&
                   e->u.bin.b->u.ival > 0;
        default: return 0;
        }
    default: return 0;
    }
}

/* Is computing e more than an add (a product, a quotient, a min or max)? */
static int dims_cost(const Expr *e)
{
    if (e->kind == E_UN)
        return dims_cost(e->u.un.a);
    if (e->kind != E_BIN)
        return 0;
    if (e->u.bin.op != OP_ADD && e->u.bin.op != OP_SUB)
        return 1;
    return dims_cost(e->u.bin.a) || dims_cost(e->u.bin.b);
}

static int expr_nodes(const Expr *e)
{
    switch (e->kind) {
    case E_UN: return 1 + expr_nodes(e->u.un.a);
    case E_BIN: return 1 + expr_nodes(e->u.bin.a) + expr_nodes(e->u.bin.b);
    default: return 1;
    }
}

static void hoist_add(Printer *P, const Expr *e)
{
    for (int i = 0; i < P->hoist.n; i++)
        if (ir_expr_equal(e, P->hoist.items[i]))
            return;
    ir_vec_push(&P->hoist, (void *)e, 1 << 16, "expressions");
}

/* The strides in e that print_body computes once, in P->hoist: in an index (in_index), a
 * factor of a product that is a product or quotient of the run-time dims (what
 * ir_buffer_stride gives a buffer compact at the run's extents). */
static int hoist_find(const Expr *e, void *ctx, int in_index)
{
    Printer *P = ctx;
    e = transparent(e);
    switch (e->kind) {
    case E_BIN:
        if (in_index && e->u.bin.op == OP_MUL)
            for (int i = 0; i < 2; i++) {
                const Expr *f = transparent(i ? e->u.bin.b : e->u.bin.a);
                if (f->kind != E_INT && dims_only(f) && dims_cost(f)) {
                    hoist_add(P, f);
                    hoist_find(i ? e->u.bin.a : e->u.bin.b, P, in_index);
                    return 0;
                }
            }
        hoist_find(e->u.bin.a, P, in_index);
        hoist_find(e->u.bin.b, P, in_index);
        break;
    case E_UN: hoist_find(e->u.un.a, P, in_index); break;
    case E_CAST:
    case E_BITCAST: hoist_find(e->u.cast.a, P, in_index); break;
    case E_LOAD: hoist_find(e->u.load.index, P, 1); break;
    case E_SELECT:
        hoist_find(e->u.sel.cond, P, 0);
        hoist_find(e->u.sel.t, P, in_index);
        hoist_find(e->u.sel.f, P, in_index);
        break;
    case E_CALL:
        for (int i = 0; i < ir_mathfn_arity(e->u.call.fn); i++)
            hoist_find(e->u.call.args[i], P, 0);
        break;
    default: break;
    }
    return 0;
}

static int hoist_find_stmt(const Stmt *s, void *ctx)
{
    switch (s->kind) {
    case S_FOR:
        hoist_find(s->u.loop.min, ctx, 0);
        hoist_find(s->u.loop.extent, ctx, 0);
        break;
    case S_LET: hoist_find(s->u.let.value, ctx, 0); break;
    case S_IF: hoist_find(s->u.cond.cond, ctx, 0); break;
    case S_STORE:
        hoist_find(s->u.store.index, ctx, 1);
        hoist_find(s->u.store.value, ctx, 0);
        break;
    case S_PREFETCH: hoist_find(s->u.store.index, ctx, 1); break;
    default: break;
    }
    return 0;
}

/* A C function body s over run-time dims, printed at depth 1: the strides of its buffers
 * at the run's extents (products of the dims' expressions) as constants at its top, each
 * computed once (the C compiler does not always take them out of the loops itself:
 * MobileNetV2's last 1x1 conv ran 1.1x slower with them inline), the smaller first, which
 * the larger then use. Only the strides: the loops' bounds are computed once per loop
 * already, and more constants than registers slowed the depthwise convs. The body is
 * printed first, aside, so that only the constants it prints (and those they use) are
 * declared: an index the printer rewrites (a micro-kernel's) may not show them all. */
static void print_body(Printer *P, const Stmt *s)
{
    int mark = P->decls.n;
    P->hoist.n = P->hoist_vars.n = P->nhoist_live = 0;
    if (is_host(P->d) && P->k->dims.n)
        em_stmt_any(s, hoist_find_stmt, NULL, P);
    int n = P->hoist.n;
    if (!n) {
        em_stmt(&P->em, s);
        return;
    }
    /* the smaller first (stable: the first met first among equals) */
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && expr_nodes(P->hoist.items[j]) < expr_nodes(P->hoist.items[j - 1]); j--) {
            void *t = P->hoist.items[j];
            P->hoist.items[j] = P->hoist.items[j - 1];
            P->hoist.items[j - 1] = t;
        }
    P->hoist_used = calloc((size_t)n, 1);
    StrBuf *defs = calloc((size_t)n, sizeof *defs), body = {0};
    if (!P->hoist_used || !defs)
        ir_die("out of memory");
    for (int i = 0; i < n; i++) {
        Var *v = ir_var_new("rt", ((const Expr *)P->hoist.items[i])->dtype);
        ir_vec_push(&P->hoist_vars, v, 1 << 16, "variables");
        P->decls.items[declare_var(P, v)].live = 1;
    }
    StrBuf *out = P->em.out;
    P->em.out = &body;
    P->nhoist_live = n;
    em_stmt(&P->em, s);
    /* each constant the body (or a larger one) uses, the larger first, each seeing the
     * smaller ones only */
    for (int i = n - 1; i >= 0; i--) {
        if (!P->hoist_used[i])
            continue;
        const Expr *e = P->hoist.items[i];
        P->em.out = &defs[i];
        P->nhoist_live = i;
        em_line(&P->em);
        sb_printf(&defs[i], "const %s %s = ", value_type(e->dtype), var_name(P, P->hoist_vars.items[i]));
        expr(P, e, 0);
        sb_puts(&defs[i], ";\n");
    }
    P->em.out = out;
    int any = 0;
    for (int i = 0; i < n; i++)
        if (defs[i].len) {
            if (!any) {
                em_line(&P->em);
                sb_puts(out, "/* of the run-time dims, computed once */\n");
            }
            any = 1;
            sb_puts(out, defs[i].data);
        }
    if (body.len)
        sb_puts(out, body.data);
    for (int i = 0; i < n; i++)
        sb_free(&defs[i]);
    sb_free(&body);
    free(defs);
    free(P->hoist_used);
    P->hoist_used = NULL;
    pop_decls(P, mark);
    P->hoist.n = P->hoist_vars.n = P->nhoist_live = 0;
}

/* ---------------------------------------------------------------- parallel loop bodies */

/* A model kernel that is one parallel loop from 0 (the default schedule's): its body is
 * printed as a function of its own, NAME_body(i, buffers...), which the loop calls. Under
 * OpenMP, gcc compiles the region it outlines for `omp parallel for` with weaker alias
 * facts and kept the register tiles' accumulators in memory (ResNet-18 on one thread 1.3x
 * slower than without -fopenmp); a function that KGEN_PARALLEL_BODY keeps out of that
 * region is compiled as any other. Without OpenMP it stays a function too (inlined into
 * the kernel and the model function, gcc spilled the same tiles), and gcc keeps its loops
 * from becoming memset/memcpy calls (kgen_runtime.h says why). NULL when the kernel is not
 * of that form. */
static const Stmt *parallel_body(const Kernel *k, const Dialect *d)
{
    const Stmt *s = k->body;
    if (!is_host(d) || !d->has_openmp || !k->internal || !s || s->kind != S_FOR ||
        s->u.loop.kind != FOR_PARALLEL || s->u.loop.min->kind != E_INT || s->u.loop.min->u.ival != 0 ||
        ir_expr_reads_memory(s->u.loop.extent))
        return NULL;
    return s;
}

int em_c_is_parallel_loop_kernel(const Kernel *k) { return parallel_body(k, &em_dialect_c) != NULL; }

/* NAME_body: the loop's iteration variable first, then the kernel's buffers */
static void print_parallel_body(Printer *P, const Stmt *loop)
{
    StrBuf *text = P->em.out;
    int di = declare_var(P, loop->u.loop.var);
    P->decls.items[di].live = 1;
    char *name = ir_fmt("%s_body", P->fname);
    P->lead_param = ir_fmt("%s %s", value_type(loop->u.loop.var->dtype), P->decls.items[di].name);
    P->proto_name = name;
    P->fn_attr = uses_bcast_ukernels(loop->u.loop.body) ? "KGEN_PARALLEL_BODY" : "KGEN_PARALLEL_BODY KGEN_WIDE_VECTORS";
    print_proto(P);
    sb_puts(text, "\n{\n");
    P->em.depth = 1;
    void_unused_params(P, loop->u.loop.body);
    print_body(P, loop->u.loop.body);
    sb_puts(text, "}\n\n");
    P->lead_param = P->proto_name = P->fn_attr = NULL;
}

/* the kernel's loop, calling NAME_body (the iteration's name is still declared) */
static void print_parallel_call(Printer *P, const Stmt *loop)
{
    const Kernel *k = P->k;
    StrBuf *text = P->em.out;
    const EmBinding *v = em_scope_find(&P->decls, loop->u.loop.var, 0);
    if (!v)
        ir_die("cprint: a parallel loop's variable was not declared");
    em_line(&P->em);
    sb_puts(text, k->team ? "KGEN_TEAM_FOR\n" : "KGEN_PARALLEL_FOR\n");
    em_line(&P->em);
    sb_printf(text, "for (%s %s = 0; %s < ", value_type(loop->u.loop.var->dtype), v->name, v->name);
    if (loop->u.loop.extent->kind == E_INT)
        print_int(P, loop->u.loop.extent->u.ival, loop->u.loop.var->dtype);
    else
        expr(P, loop->u.loop.extent, P_REL + 1);
    sb_printf(text, "; ++%s) {\n", v->name);
    P->em.depth++;
    em_line(&P->em);
    sb_printf(text, "%s_body(%s", P->fname, v->name);
    for (int i = 0; i < k->params.n; i++)
        sb_printf(text, ", %s", buf_name(P, k->params.items[i]));
    for (int i = 0; i < k->dims.n; i++)
        sb_printf(text, ", %s", var_name(P, k->dims.items[i]));
    sb_puts(text, ");\n");
    P->em.depth--;
    em_line(&P->em);
    sb_puts(text, "}\n");
    pop_decls(P, P->dims_mark);
}

void em_print_kernel(StrBuf *out, const Kernel *k, const Dialect *d)
{
    Printer P;
    StrBuf text = {0};
    printer_init(&P, &text, k, d, 1);

    /* the header comment: the kernel's name, then its notes a line each */
    sb_puts(&text, "/* ");
    em_comment_text(&text, k->name);
    em_comment_notes(&text, &k->notes, 1);
    sb_puts(&text, k->notes.n ? "\n */\n" : " */\n");
    const Stmt *par = parallel_body(k, d);
    if (par)
        print_parallel_body(&P, par);
    /* a model's kernel that calls no broadcasting micro-kernel: 256-bit vector loops
     * (kgen_runtime.h) */
    if (!par && is_host(d) && k->internal && !uses_bcast_ukernels(k->body))
        P.fn_attr = "KGEN_WIDE_VECTORS";
    print_proto(&P);
    P.fn_attr = NULL;
    sb_puts(&text, "\n{\n");

    P.em.depth = 1;
    if (!k->internal && !uses_workspace(k->body)) {
        em_line(&P.em);
        sb_puts(&text, "(void)workspace;\n");
    }
    if (par) {
        print_parallel_call(&P, par);   /* every buffer goes to NAME_body */
    } else {
        void_unused_params(&P, k->body);
        print_body(&P, k->body);
    }
    if (is_host(d) && !k->internal) {
        em_line(&P.em);
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

/* Declare the shared arrays of a launch at the top of its function (OpenCL and Metal
 * allow them nowhere else). */
static int hoist_shared_node(const Stmt *s, void *ctx)
{
    Printer *P = ctx;
    if (s->kind == S_ALLOC && s->u.alloc.buf->scope == SCOPE_SHARED) {
        const Buffer *b = s->u.alloc.buf;
        em_line(&P->em);
        sb_printf(P->em.out, "%s %s %s[%lld];\n", P->d->local_qual, ir_dtype_ctype(b->dtype), buf_name(P, b),
                  (long long)(b->size > 0 ? b->size : 1));
    }
    return 0;
}

static void hoist_shared(Printer *P, const Stmt *s) { em_stmt_any(s, hoist_shared_node, NULL, P); }

void em_free_launches(EmLaunch *l, int n)
{
    for (int i = 0; l && i < n; i++)
        free(l[i].name);
    free(l);
}

/* Launch li of the plan as one function, named l->name, with its header comment, the
 * (void) lines for what it leaves unused, its shared arrays and the workspace buffers it
 * uses (P->launch is it). */
static void print_launch(Printer *P, const LowerLaunchPlan *plan, int li, const EmLaunch *l)
{
    const Kernel *k = P->k;
    const Stmt *item = plan->items[li].body;
    StrBuf *text = P->em.out;
    int64_t threads = l->block[0] * l->block[1] * l->block[2];
    P->proto_name = l->name;
    /* header comment: the kernel's name and notes (on its first launch), the grid */
    sb_puts(text, "/* ");
    em_comment_text(text, k->name);
    if (plan->n > 1)
        sb_printf(text, ", launch %d of %d", li + 1, plan->n);
    if (li == 0)
        em_comment_notes(text, &k->notes, 1);
    int dyn = l->dgrid[0] || l->dgrid[1] || l->dgrid[2];
    sb_printf(text, "\n * grid %s%lld x %lld x %lld blocks%s of %lld x %lld x %lld threads%s\n */\n", dyn ? "at most " : "",
              (long long)l->grid[0], (long long)l->grid[1], (long long)l->grid[2], dyn ? " (decided at run time)" : "",
              (long long)l->block[0],
              (long long)l->block[1], (long long)l->block[2],
              threads == 1 && l->grid[0] * l->grid[1] * l->grid[2] == 1 ? " (not parallelized: one thread)" : "");
    print_proto(P);
    sb_puts(text, "\n{\n");
    P->em.depth = 1;
    const PtrVec *ws = &plan->workspace;
    int wsused = 0;
    for (int j = 0; j < ws->n; j++)
        wsused |= stmt_refs(item, ws->items[j]);
    if (!k->internal && !wsused) {
        em_line(&P->em);
        sb_puts(text, "(void)workspace;\n");
    }
    void_unused_params(P, item);
    hoist_shared(P, item);
    Stmt *wrapped = (Stmt *)item;
    for (int j = ws->n - 1; j >= 0; j--)
        if (stmt_refs(item, ws->items[j]))
            wrapped = ir_allocate(ws->items[j], wrapped);
    em_stmt(&P->em, wrapped);
    pop_decls(P, P->dims_mark);    /* (the run-time dims stay: every launch takes them) */
    sb_puts(text, "}\n");
}

int em_print_gpu_kernel(StrBuf *out, const Kernel *k, const Dialect *d, const Target *t, EmLaunch **launches)
{
    /* the gpu-launch pass (lower/launch.c) decides the launches and checks them */
    LowerLaunchPlan plan;
    LowerLaunchLimits lim = {.lang = d->name, .max_threads = t->max_threads, .max_shared = t->max_shared,
                             .no_f64 = d->no_f64};
    *launches = NULL;
    if (lower_launch_plan(k, &lim, &plan)) {
        lower_launch_free(&plan);
        return -1;
    }
    int n = plan.n;
    EmLaunch *L = calloc((size_t)(n ? n : 1), sizeof *L);
    if (!L)
        ir_die("out of memory");

    Printer P;
    StrBuf text = {0};
    printer_init(&P, &text, k, d, 1);
    for (int li = 0; li < n; li++) {
        EmLaunch *l = &L[li];
        if (n == 1) {
            l->name = em_strdup(P.fname);
        } else {
            l->name = xmalloc(strlen(P.fname) + 24);
            sprintf(l->name, "%s_%d", P.fname, li);
        }
        for (int j = 0; j < 3; j++) {
            l->grid[j] = plan.items[li].ext[j];
            l->block[j] = plan.items[li].ext[3 + j];
        }
        l->shared_bytes = plan.items[li].shared_bytes;
        for (int j = 0; j < 3; j++)
            l->dgrid[j] = plan.items[li].dext[j];
        P.launch = &plan.items[li];
        print_launch(&P, &plan, li, l);
        if (li + 1 < n)
            sb_puts(&text, "\n");
    }
    put_lowbit(out, k);
    if (text.len)
        sb_puts(out, text.data);
    sb_free(&text);
    printer_free(&P);
    lower_launch_free(&plan);
    *launches = L;
    return n;
}
