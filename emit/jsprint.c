/* jsprint.c - the JavaScript printer: a Kernel of loop IR as one JS function over typed
 * arrays (a second printer over the loop IR, not a translation of the C text).
 *
 * Values by element type: f32 and the storage floats (f16, bf16, float8) are Numbers kept
 * in float32 by Math.fround after every rounding operation (double rounding of + - * /
 * and sqrt through double is innocuous, so results equal C's float ones); f64 plain
 * Numbers; bool, i8, u8, i16, u16 and i32 Numbers in int32 (C promotes the narrow ones to
 * int), wrapped with |0 and Math.imul; u32 Numbers in [0, 2^32) wrapped with >>>0; i64 and
 * u64 BigInts wrapped with BigInt.asIntN/asUintN. Comparisons give JS booleans, which
 * typed-array stores, arithmetic and == turn into 0/1 like C.
 * Local arrays are hoisted to module-level typed arrays (kernels are not reentrant; no
 * allocation per call); workspace buffers are views into the workspace ArrayBuffer.
 * The statement walk, scopes and identifiers are printer.c's; this file gives its hooks.
 * requires: a lowered kernel; breaks: nothing. */
#include "jsemit.h"
#include "printer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { C_F32, C_F64, C_I32, C_U32, C_I64, C_U64 };

static int cls(DType t)
{
    if (ir_dtype_is_storage(t) || t == DT_F32)
        return C_F32;
    switch (t) {
    case DT_F64: return C_F64;
    case DT_U32: return C_U32;
    case DT_I64: return C_I64;
    case DT_U64: return C_U64;
    default: return C_I32;
    }
}

static int is_big(DType t) { return cls(t) == C_I64 || cls(t) == C_U64; }

const char *em_js_array_type(DType t)
{
    switch (t) {
    case DT_I8: return "Int8Array";
    case DT_I16: return "Int16Array";
    case DT_U16:
    case DT_F16:
    case DT_BF16: return "Uint16Array";
    case DT_I32: return "Int32Array";
    case DT_U32: return "Uint32Array";
    case DT_I64: return "BigInt64Array";
    case DT_U64: return "BigUint64Array";
    case DT_F32: return "Float32Array";
    case DT_F64: return "Float64Array";
    default: return "Uint8Array";     /* bool, u8, float8 */
    }
}

/* ---------------------------------------------------------------- names */

static const char *const js_reserved[] = {
    "break", "case", "catch", "class", "const", "continue", "debugger", "default", "delete", "do", "else",
    "enum", "export", "extends", "false", "finally", "for", "function", "if", "import", "in", "instanceof",
    "new", "null", "return", "super", "switch", "this", "throw", "true", "try", "typeof", "var", "void",
    "while", "with", "yield", "let", "static", "implements", "interface", "package", "private",
    "protected", "public", "await", "async", "arguments", "eval", "undefined", "NaN", "Infinity", "Math",
    "Number", "BigInt", "Object", "Array", "Error", "k", "fround", "imul", "workspace", "of", "globalThis",
    "constructor", "prototype", "window", "self", "process", "console", "fetch", "URL",
    NULL,
};

static int js_is_reserved(const char *s)
{
    for (int i = 0; js_reserved[i]; i++)
        if (!strcmp(s, js_reserved[i]))
            return 1;
    /* typed-array and module names the generated code uses */
    return strstr(s, "Array") != NULL || !strncmp(s, "kgen", 4);
}

char *em_js_ident(const char *s)
{
    char *r = em_ident_base(s, "v_", 0);
    if (js_is_reserved(r)) {
        char *q = malloc(strlen(r) + 2);
        if (!q)
            ir_die("out of memory");
        strcpy(q, r);
        strcat(q, "_");
        free(r);
        return q;
    }
    return r;
}

/* ---------------------------------------------------------------- printer state */

typedef struct {
    EmPrinter em;          /* the function's text, its indentation, the statement hooks */
    StrBuf *hoist;         /* module-level declarations (local arrays) */
    const Kernel *k;
    const char *fn;
    EmScope b;             /* live bindings, innermost last (names in the IR arena) */
    PtrVec used;           /* every name this function declared (char*) */
    PtrVec *module_names;  /* names taken at module level (char*) */
} J;

static int in_names(const PtrVec *v, const char *s)
{
    for (int i = 0; i < v->n; i++)
        if (!strcmp(v->items[i], s))
            return 1;
    return 0;
}

/* What fresh() asks of a candidate name. */
typedef struct {
    const J *P;
    const char *base;      /* the identifier before any suffix */
    int loop;              /* for a loop variable */
} FreshQuery;

static int fresh_taken(void *ctx, const char *s)
{
    const FreshQuery *q = ctx;
    const J *P = q->P;
    if (js_is_reserved(s) || em_scope_has_name(&P->b, s) || in_names(P->module_names, s))
        return 1;
    /* a loop variable reuses its own name in sibling loops (block scoped); lets and
     * buffers stay unique */
    return in_names(&P->used, s) && !(q->loop && !strcmp(s, q->base));
}

/* A fresh name in this function: a loop variable reuses its name in sibling loops
 * (block scoped), everything else gets a name never used before here. */
static char *fresh(J *P, const char *raw, int loop)
{
    char *base = em_js_ident(raw);
    FreshQuery q = {P, base, loop};
    char *heap = em_unique_name(base, fresh_taken, &q);
    char *s = ir_strdup(heap);
    free(heap);
    free(base);
    ir_vec_push(&P->used, s, 1 << 24, "names in a JavaScript function");
    return s;
}

static void bind(J *P, const void *key, char *name) { em_scope_push(&P->b, key, name, 1); }

static const char *lookup(J *P, const void *key)
{
    const EmBinding *x = em_scope_find(&P->b, key, 1);
    if (!x)
        ir_die("jsprint: unbound variable or buffer");
    return x->name;
}

/* ---------------------------------------------------------------- expressions */

static void ex(J *P, const Expr *e, int top);

#define OPEN() do { if (!top) sb_puts(o, "("); } while (0)
#define CLOSE() do { if (!top) sb_puts(o, ")"); } while (0)

/* the shortest decimal that reads back as exactly v (a double) */
static void put_double(StrBuf *o, double v)
{
    char buf[64];
    if (isnan(v)) {
        sb_puts(o, "NaN");
        return;
    }
    if (isinf(v)) {
        sb_puts(o, v > 0 ? "Infinity" : "-Infinity");
        return;
    }
    if (v == 0) {
        sb_puts(o, signbit(v) ? "-0" : "0");
        return;
    }
    em_shortest_g(buf, sizeof buf, v, 0, 16);   /* whole numbers below 1e16 spelled out */
    sb_puts(o, buf);
}

static void put_const(J *P, double fv, int64_t iv, int isint, DType t, int top)
{
    StrBuf *o = P->em.out;
    int c = cls(t);
    if (c == C_F32 || c == C_F64) {
        double v = isint ? (double)iv : fv;
        if (c == C_F32)
            v = (float)v;       /* exactly the float's value, so no fround is needed */
        int neg = signbit(v) && !isnan(v);
        if (neg)
            OPEN();
        put_double(o, v);
        if (neg)
            CLOSE();
        return;
    }
    int64_t v = isint ? iv : (int64_t)fv;
    v = ir_wrap_int(v, t);
    if (t == DT_BOOL)
        v = v != 0;
    if (c == C_U64)
        sb_printf(o, "%llun", (unsigned long long)(uint64_t)v);
    else if (c == C_U32)
        sb_printf(o, "%llu", (unsigned long long)(uint32_t)v);
    else {
        if (v < 0)
            OPEN();
        sb_printf(o, c == C_I64 ? "%lldn" : "%lld", (long long)v);
        if (v < 0)
            CLOSE();
    }
}

/* an expression converted from its class to a Number that is an int32 */
static void as_i32(J *P, const Expr *a)
{
    StrBuf *o = P->em.out;
    switch (cls(a->dtype)) {
    case C_I32:
        if (a->kind == E_BIN && ir_binop_kind(a->u.bin.op) != 'A') {
            sb_puts(o, "(");       /* a boolean */
            ex(P, a, 0);
            sb_puts(o, " | 0)");
        } else
            ex(P, a, 0);
        break;
    case C_I64:
    case C_U64:
        sb_puts(o, "Number(BigInt.asIntN(32, ");
        ex(P, a, 1);
        sb_puts(o, "))");
        break;
    default:
        sb_puts(o, "(");
        ex(P, a, 0);
        sb_puts(o, " | 0)");
        break;
    }
}

static void print_cast(J *P, const Expr *e, int top)
{
    StrBuf *o = P->em.out;
    const Expr *a = e->u.cast.a;
    DType from = a->dtype, to = e->dtype;
    int cf = cls(from), ct = cls(to);
    if (to == DT_BOOL) {
        OPEN();
        ex(P, a, 0);
        sb_puts(o, is_big(from) ? " != 0n" : " != 0");
        CLOSE();
        return;
    }
    if (ir_dtype_is_packed(to) && !ir_dtype_is_float(to)) {
        /* wrapped into the type's range, as a store would; from a float truncated first */
        Expr wide = {.kind = E_CAST, .dtype = DT_I32};
        wide.u.cast.a = (Expr *)a;
        sb_printf(o, "k.wrap_%s(", ir_dtype_name(to));
        if (cf == C_I32)
            ex(P, a, 1);
        else
            ex(P, &wide, 1);
        sb_puts(o, ")");
        return;
    }
    if (ir_dtype_is_storage(to)) {
        sb_printf(o, "k.%s_to_f32(k.f32_to_%s(", ir_dtype_name(to), ir_dtype_name(to));
        if (cf == C_F32)
            ex(P, a, 1);
        else if (is_big(from)) {
            sb_puts(o, "fround(Number(");
            ex(P, a, 1);
            sb_puts(o, "))");
        } else {
            sb_puts(o, "fround(");
            ex(P, a, 1);
            sb_puts(o, ")");
        }
        sb_puts(o, "))");
        return;
    }
    switch (ct) {
    case C_F32:
        if (cf == C_F32) {
            ex(P, a, top);
            return;
        }
        sb_puts(o, is_big(from) ? "fround(Number(" : "fround(");
        ex(P, a, 1);
        sb_puts(o, is_big(from) ? "))" : ")");
        return;
    case C_F64:
        if (cf == C_F64 || cf == C_F32 || cf == C_U32) {
            ex(P, a, top);
            return;
        }
        sb_puts(o, is_big(from) ? "Number(" : "(+");
        ex(P, a, is_big(from));
        sb_puts(o, ")");
        return;
    case C_I32: {
        Expr wide = {.kind = E_CAST, .dtype = DT_I32};
        if (cf == C_F32 || cf == C_F64) {   /* C truncates; out of range is undefined there */
            if (to == DT_I32) {
                sb_puts(o, "(");
                ex(P, a, 0);
                sb_puts(o, " | 0)");
                return;
            }
            wide.u.cast.a = (Expr *)a;
            a = &wide;
            cf = C_I32;
        }
        switch (to) {
        case DT_I8: sb_puts(o, "(("); as_i32(P, a); sb_puts(o, " << 24) >> 24)"); return;
        case DT_I16: sb_puts(o, "(("); as_i32(P, a); sb_puts(o, " << 16) >> 16)"); return;
        case DT_U8: sb_puts(o, "("); as_i32(P, a); sb_puts(o, " & 255)"); return;
        case DT_U16: sb_puts(o, "("); as_i32(P, a); sb_puts(o, " & 65535)"); return;
        default:
            if (cf == C_I32 && a->kind != E_BIN)
                ex(P, a, top);
            else
                as_i32(P, a);
            return;
        }
    }
    case C_U32:
        if (is_big(from)) {
            sb_puts(o, "Number(BigInt.asUintN(32, ");
            ex(P, a, 1);
            sb_puts(o, "))");
        } else {
            sb_puts(o, "(");
            ex(P, a, 0);
            sb_puts(o, " >>> 0)");
        }
        return;
    case C_I64:
    case C_U64: {
        const char *wrap = ct == C_I64 ? "BigInt.asIntN(64, " : "BigInt.asUintN(64, ";
        if (is_big(from)) {
            sb_puts(o, wrap);
            ex(P, a, 1);
            sb_puts(o, ")");
        } else if (cf == C_F32 || cf == C_F64) {
            sb_printf(o, "k.float_to_%s(", ct == C_I64 ? "i64" : "u64");
            ex(P, a, 1);
            sb_puts(o, ")");
        } else {
            sb_puts(o, ct == C_U64 ? "BigInt.asUintN(64, BigInt(" : "BigInt(");
            as_i32(P, a);
            sb_puts(o, ct == C_U64 ? "))" : ")");
        }
        return;
    }
    }
}

/* The bits of a (a Number up to 32 bits, a BigInt for 64: k.f32_bits, k.f64_bits, a storage
 * float's encoding, an integer itself), then read as e's type (k.bits_f32, k.bits_f64, the
 * storage decoding, or the integer wrap of that width). */
static void print_bitcast(J *P, const Expr *e)
{
    StrBuf *o = P->em.out;
    const Expr *a = e->u.cast.a;
    DType from = a->dtype, to = e->dtype;
    const char *open, *close = ")";
    switch (to) {
    case DT_F32: open = "k.bits_f32("; break;
    case DT_F64: open = "k.bits_f64("; break;
    case DT_I8: open = "(("; close = " << 24) >> 24)"; break;
    case DT_U8: open = "("; close = " & 255)"; break;
    case DT_I16: open = "(("; close = " << 16) >> 16)"; break;
    case DT_U16: open = "("; close = " & 65535)"; break;
    case DT_I32: open = "("; close = " | 0)"; break;
    case DT_U32: open = "("; close = " >>> 0)"; break;
    case DT_I64: open = "BigInt.asIntN(64, "; break;
    case DT_U64: open = "BigInt.asUintN(64, "; break;
    default:   /* a storage float: its encoding, masked to its width */
        open = ir_fmt("k.%s_to_f32(%s", ir_dtype_name(to), ir_dtype_bytes(to) == 2 ? "65535 & " : "255 & ");
        break;
    }
    sb_puts(o, open);
    if (from == DT_F32 || from == DT_F64 || ir_dtype_is_storage(from)) {
        if (ir_dtype_is_storage(from))
            sb_printf(o, "k.f32_to_%s(", ir_dtype_name(from));
        else
            sb_printf(o, "k.%s_bits(", ir_dtype_name(from));
        ex(P, a, 1);
        sb_puts(o, ")");
    } else {
        ex(P, a, 0);
    }
    sb_puts(o, close);
}

/* The math functions: Math's, else kgen_runtime.mjs's (k.). */
static const EmMathName js_math[] = {
    {FN_EXP, "Math.exp"},     {FN_LOG, "Math.log"},     {FN_SQRT, "Math.sqrt"},     {FN_TANH, "Math.tanh"},
    {FN_ABS, "Math.abs"},     {FN_FLOOR, "Math.floor"}, {FN_CEIL, "Math.ceil"},     {FN_TRUNC, "Math.trunc"},
    {FN_SIN, "Math.sin"},     {FN_COS, "Math.cos"},     {FN_TAN, "Math.tan"},       {FN_ASIN, "Math.asin"},
    {FN_ACOS, "Math.acos"},   {FN_ATAN, "Math.atan"},   {FN_SINH, "Math.sinh"},     {FN_COSH, "Math.cosh"},
    {FN_ASINH, "Math.asinh"}, {FN_ACOSH, "Math.acosh"}, {FN_ATANH, "Math.atanh"},   {FN_RSQRT, "k.rsqrt"},
    {FN_SIGMOID, "k.sigmoid"}, {FN_ERF, "k.erf"},       {FN_POW, "k.pow"},          {FN_ROUND, "k.rint"},
    {FN_ISNAN, "Number.isNaN"}, {FN_ISINF, "k.isinf"},  {FN_FMA, "k.fma"},          {FN_COUNT, NULL},
};

static void print_call(J *P, const Expr *e)
{
    StrBuf *o = P->em.out;
    MathFn fn = e->u.call.fn;
    const Expr *a0 = e->u.call.args[0];
    DType t = a0->dtype;
    if (!ir_dtype_is_float(t)) {
        if (fn != FN_ABS)
            ir_die("jsprint: %s of an integer", ir_mathfn_name(fn));
        switch (cls(t)) {
        case C_I64: sb_puts(o, "k.abs_i64("); ex(P, a0, 1); sb_puts(o, ")"); return;
        case C_U32:
        case C_U64: ex(P, a0, 0); return;
        default: sb_puts(o, "(Math.abs("); ex(P, a0, 1); sb_puts(o, ") | 0)"); return;
        }
    }
    /* exact in float already, or a boolean: no rounding */
    int exact = fn == FN_ABS || fn == FN_FLOOR || fn == FN_CEIL || fn == FN_TRUNC || fn == FN_ROUND ||
                fn == FN_ISNAN || fn == FN_ISINF;
    int f32 = cls(t) == C_F32 && !exact;
    if (f32)
        sb_puts(o, "fround(");
    if (fn == FN_RSQRT && cls(t) == C_F32)    /* C: 1.0f / sqrtf(x) */
        sb_puts(o, "1 / fround(Math.sqrt");
    else
        sb_puts(o, em_math_override(js_math, fn));
    sb_puts(o, "(");
    for (int i = 0; i < KG_MAX_ARGS && e->u.call.args[i]; i++) {
        if (i)
            sb_puts(o, ", ");
        ex(P, e->u.call.args[i], 1);
    }
    if (fn == FN_RSQRT && cls(t) == C_F32)
        sb_puts(o, ")");
    sb_puts(o, ")");
    if (f32)
        sb_puts(o, ")");
}

static void infix(J *P, const Expr *a, const char *tok, const Expr *b)
{
    ex(P, a, 0);
    sb_printf(P->em.out, " %s ", tok);
    ex(P, b, 0);
}

static void print_bin(J *P, const Expr *e, int top)
{
    StrBuf *o = P->em.out;
    BinOp op = e->u.bin.op;
    const Expr *a = e->u.bin.a, *b = e->u.bin.b;
    int c = cls(a->dtype);
    int kind = ir_binop_kind(op);
    const char *tok = ir_binop_text(op);
    if (kind == 'C') {
        OPEN();
        infix(P, a, op == OP_EQ ? "==" : op == OP_NE ? "!=" : tok, b);
        CLOSE();
        return;
    }
    if (kind == 'L') {
        OPEN();
        infix(P, a, tok, b);
        CLOSE();
        return;
    }
    if (op == OP_MIN || op == OP_MAX) {
        const char *mm = op == OP_MIN ? "min" : "max";
        if (c == C_F32 || c == C_F64)
            sb_printf(o, "k.%s(", mm);           /* NaN propagates */
        else if (is_big(a->dtype))
            sb_printf(o, "k.%s_big(", mm);
        else
            sb_printf(o, "Math.%s(", mm);
        ex(P, a, 1);
        sb_puts(o, ", ");
        ex(P, b, 1);
        sb_puts(o, ")");
        return;
    }
    if (c == C_F32 || c == C_F64) {
        const char *pre = c == C_F32 ? "fround(" : "(";
        switch (op) {
        case OP_ADD:
        case OP_SUB:
        case OP_MUL:
        case OP_DIV:
        case OP_MOD:
            if (c == C_F32)
                sb_puts(o, pre);
            else
                OPEN();
            infix(P, a, tok, b);
            if (c == C_F32)
                sb_puts(o, ")");
            else
                CLOSE();
            return;
        case OP_FLOORDIV:
            sb_printf(o, "Math.floor(%s", pre);
            infix(P, a, "/", b);
            sb_puts(o, "))");
            return;
        case OP_FLOORMOD:
            sb_printf(o, "%sk.floormod(", c == C_F32 ? "fround(" : "");
            ex(P, a, 1);
            sb_puts(o, ", ");
            ex(P, b, 1);
            sb_puts(o, c == C_F32 ? "))" : ")");
            return;
        default: ir_die("jsprint: float operator %s", tok);
        }
    }
    if (is_big(a->dtype)) {
        const char *wrap = c == C_I64 ? "BigInt.asIntN(64, " : "BigInt.asUintN(64, ";
        switch (op) {
        case OP_ADD:
        case OP_SUB:
        case OP_MUL:
        case OP_SHL:
            sb_puts(o, wrap);
            infix(P, a, tok, b);
            sb_puts(o, ")");
            return;
        case OP_FLOORDIV:
        case OP_FLOORMOD:
            if (c == C_I64) {
                sb_printf(o, "k.%s_i64(", op == OP_FLOORDIV ? "floordiv" : "floormod");
                ex(P, a, 1);
                sb_puts(o, ", ");
                ex(P, b, 1);
                sb_puts(o, ")");
                return;
            }
            tok = op == OP_FLOORDIV ? "/" : "%";
            break;
        case OP_DIV:
            sb_puts(o, wrap);     /* INT64_MIN / -1 */
            infix(P, a, tok, b);
            sb_puts(o, ")");
            return;
        default: break;
        }
        OPEN();
        infix(P, a, tok, b);
        CLOSE();
        return;
    }
    if (c == C_U32) {
        switch (op) {
        case OP_MUL:
            sb_puts(o, "(Math.imul(");
            ex(P, a, 1);
            sb_puts(o, ", ");
            ex(P, b, 1);
            sb_puts(o, ") >>> 0)");
            return;
        case OP_DIV:
        case OP_FLOORDIV: tok = "/"; break;
        case OP_MOD:
        case OP_FLOORMOD:
            OPEN();
            infix(P, a, "%", b);
            CLOSE();
            return;
        case OP_SHR:
            OPEN();
            infix(P, a, ">>>", b);
            CLOSE();
            return;
        default: break;
        }
        sb_puts(o, "((");
        infix(P, a, tok, b);
        sb_puts(o, ") >>> 0)");
        return;
    }
    /* int32 */
    switch (op) {
    case OP_MUL:
        sb_puts(o, "Math.imul(");
        ex(P, a, 1);
        sb_puts(o, ", ");
        ex(P, b, 1);
        sb_puts(o, ")");
        return;
    case OP_FLOORDIV:
    case OP_FLOORMOD:
        sb_printf(o, "k.%s_i32(", op == OP_FLOORDIV ? "floordiv" : "floormod");
        ex(P, a, 1);
        sb_puts(o, ", ");
        ex(P, b, 1);
        sb_puts(o, ")");
        return;
    case OP_BITAND:
    case OP_BITOR:
    case OP_BITXOR:
    case OP_SHL:
    case OP_SHR:
        OPEN();
        infix(P, a, tok, b);
        CLOSE();
        return;
    default:
        sb_puts(o, "((");
        infix(P, a, tok, b);
        sb_puts(o, ") | 0)");
        return;
    }
}

static void load(J *P, const Buffer *b, const Expr *index)
{
    StrBuf *o = P->em.out;
    sb_puts(o, lookup(P, b));
    if (em_is_scalar(b))
        return;
    sb_puts(o, "[");
    ex(P, index, 1);
    sb_puts(o, "]");
}

/* a packed element's code: k.u4(buf, index), sign-extended for i4 and i2 (k.i4) */
static void packed_code(J *P, const Buffer *b, const Expr *index, int raw)
{
    StrBuf *o = P->em.out;
    int bits = ir_dtype_bits(b->dtype);
    sb_printf(o, "k.%c%d(%s, ", !raw && (b->dtype == DT_I4 || b->dtype == DT_I2) ? 'i' : 'u', bits, lookup(P, b));
    ex(P, index, 1);
    sb_puts(o, ")");
}

static void ex(J *P, const Expr *e, int top)
{
    StrBuf *o = P->em.out;
    if (!e)
        ir_die("jsprint: missing expression");
    switch (e->kind) {
    case E_INT: put_const(P, 0, e->u.ival, 1, e->dtype, top); break;
    case E_FLOAT: put_const(P, e->u.fval, 0, 0, e->dtype, top); break;
    case E_VAR: sb_puts(o, lookup(P, e->u.var)); break;
    case E_BIN: print_bin(P, e, top); break;
    case E_UN: {
        const Expr *a = e->u.un.a;
        int c = cls(a->dtype);
        if (e->u.un.op == UN_NOT) {
            sb_puts(o, "!");
            ex(P, a, 0);
        } else if (e->u.un.op == UN_NEG) {
            if (is_big(a->dtype)) {
                sb_puts(o, c == C_I64 ? "BigInt.asIntN(64, -" : "BigInt.asUintN(64, -");
                ex(P, a, 0);
                sb_puts(o, ")");
            } else if (c == C_I32 || c == C_U32) {
                sb_puts(o, "(-");
                ex(P, a, 0);
                sb_puts(o, c == C_I32 ? " | 0)" : " >>> 0)");
            } else {
                OPEN();
                sb_puts(o, "-");
                ex(P, a, 0);
                CLOSE();
            }
        } else {
            if (c == C_U64) {
                sb_puts(o, "BigInt.asUintN(64, ~");
                ex(P, a, 0);
                sb_puts(o, ")");
            } else if (c == C_U32) {
                sb_puts(o, "(~");
                ex(P, a, 0);
                sb_puts(o, " >>> 0)");
            } else {
                OPEN();
                sb_puts(o, "~");
                ex(P, a, 0);
                CLOSE();
            }
        }
        break;
    }
    case E_CALL: print_call(P, e); break;
    case E_CAST: print_cast(P, e, top); break;
    case E_BITCAST: print_bitcast(P, e); break;
    case E_SELECT:
        OPEN();
        ex(P, e->u.sel.cond, 0);
        sb_puts(o, " ? ");
        ex(P, e->u.sel.t, 0);
        sb_puts(o, " : ");
        ex(P, e->u.sel.f, 0);
        CLOSE();
        break;
    case E_LOAD: {
        const Buffer *b = e->u.load.buf;
        if (ir_dtype_is_storage(b->dtype))
            sb_printf(o, "k.%s_to_f32(", ir_dtype_name(b->dtype));
        if (ir_dtype_is_packed(b->dtype))
            packed_code(P, b, e->u.load.index, 0);
        else
            load(P, b, e->u.load.index);
        if (ir_dtype_is_storage(b->dtype))
            sb_puts(o, ")");
        break;
    }
    case E_ACCESS:
    case E_REDUCE: ir_die("jsprint: tensor IR expression in a lowered kernel");
    }
}

/* ---------------------------------------------------------------- statements */

static void print_for(EmPrinter *E, const Stmt *s)
{
    J *P = (J *)E;
    Var *v = s->u.loop.var;
    const Expr *min = s->u.loop.min, *ext = s->u.loop.extent;
    int mark = P->b.n;
    char *name = fresh(P, v->name, 1);
    em_line(&P->em);
    sb_printf(P->em.out, "for (let %s = ", name);
    ex(P, min, 1);
    sb_printf(P->em.out, "; %s < ", name);
    int64_t lo, n;
    if (ir_expr_is_const(min, &lo) && lo == 0)
        ex(P, ext, 0);
    else if (ir_expr_is_const(min, &lo) && ir_expr_is_const(ext, &n))
        sb_printf(P->em.out, "%lld", (long long)(lo + n));
    else {
        ex(P, min, 0);
        sb_puts(P->em.out, " + ");
        ex(P, ext, 0);
    }
    sb_printf(P->em.out, "; %s++) {", name);
    switch (s->u.loop.kind) {
    case FOR_UNROLLED: sb_puts(P->em.out, " /* unrolled */"); break;
    case FOR_VECTORIZED: sb_puts(P->em.out, " /* vectorized */"); break;
    case FOR_PARALLEL: sb_puts(P->em.out, " /* parallel */"); break;
    case FOR_BOUND: sb_printf(P->em.out, " /* %s */", s->u.loop.bind_tag ? s->u.loop.bind_tag : "bound"); break;
    default: break;
    }
    sb_puts(P->em.out, "\n");
    bind(P, v, name);
    em_block(&P->em, s->u.loop.body);
    em_line(&P->em);
    sb_printf(P->em.out, "} /* %s */\n", name);
    em_scope_pop(&P->b, mark, 0);
}

static void print_alloc(EmPrinter *E, const Stmt *s)
{
    J *P = (J *)E;
    const Buffer *b = s->u.alloc.buf;
    StrBuf *o = P->em.out;
    int mark = P->b.n;
    char *name;
    if (em_is_scalar(b)) {
        name = fresh(P, b->name, 0);
        em_line(&P->em);
        sb_printf(o, "let %s = %s;\n", name, is_big(b->dtype) ? "0n" : "0");
    } else if (b->scope == SCOPE_WORKSPACE) {
        name = fresh(P, b->name, 0);
        em_line(&P->em);
        sb_printf(o, "const %s = new %s(workspace, %lld, %lld);\n", name, em_js_array_type(b->dtype),
                  (long long)b->ws_offset, (long long)(b->size > 0 ? b->size : 1));
    } else {
        /* a module-level array, made once: NAME_buffer */
        char *raw = ir_fmt("%s_%s", P->fn, b->name);
        name = fresh(P, raw, 0);
        ir_vec_push(P->module_names, name, 1 << 24, "module names");
        sb_printf(P->hoist, "const %s = new %s(%lld);\n", name, em_js_array_type(b->dtype),
                  (long long)(b->size > 0 ? b->size : 1));
    }
    bind(P, b, name);
    em_stmt(&P->em, s->u.alloc.body);
    em_scope_pop(&P->b, mark, 0);
}

static void print_store(EmPrinter *E, const Stmt *s)
{
    J *P = (J *)E;
    StrBuf *o = P->em.out;
    const Buffer *b = s->u.store.buf;
    const Expr *v = s->u.store.value;
    em_line(&P->em);
    if (ir_dtype_is_packed(b->dtype)) {
        /* k.set4(buf, index, code): a read-modify-write of the byte, keeping the code's low
         * bits (so a wrap to the type right before it is left out); a copy moves the code */
        sb_printf(o, "k.set%d(%s, ", ir_dtype_bits(b->dtype), lookup(P, b));
        ex(P, s->u.store.index, 1);
        sb_puts(o, ", ");
        if (v->kind == E_LOAD && v->u.load.buf->dtype == b->dtype)
            packed_code(P, v->u.load.buf, v->u.load.index, 1);
        else if (b->dtype == DT_F4E2M1) {
            if (v->kind == E_CAST && v->dtype == b->dtype)
                v = v->u.cast.a;
            sb_puts(o, "k.f32_to_f4e2m1(");
            Expr tmp = {.kind = E_CAST, .dtype = DT_F32};
            tmp.u.cast.a = (Expr *)v;
            ex(P, cls(v->dtype) == C_F32 ? v : &tmp, 1);
            sb_puts(o, ")");
        } else {
            Expr wide = {.kind = E_CAST, .dtype = DT_I32};
            wide.u.cast.a = v->kind == E_CAST && v->dtype == b->dtype ? v->u.cast.a : (Expr *)v;
            ex(P, cls(wide.u.cast.a->dtype) == C_I32 ? wide.u.cast.a : &wide, 1);
        }
        sb_puts(o, ");\n");
        return;
    }
    load(P, b, s->u.store.index);
    sb_puts(o, " = ");
    if (ir_dtype_is_storage(b->dtype) && v->kind == E_LOAD && v->u.load.buf->dtype == b->dtype) {
        load(P, v->u.load.buf, v->u.load.index);     /* a copy moves the bits */
    } else if (ir_dtype_is_storage(b->dtype)) {
        if (v->kind == E_CAST && v->dtype == b->dtype)
            v = v->u.cast.a;
        sb_printf(o, "k.f32_to_%s(", ir_dtype_name(b->dtype));
        if (cls(v->dtype) == C_F32)
            ex(P, v, 1);
        else {
            Expr tmp = {.kind = E_CAST, .dtype = DT_F32};
            tmp.u.cast.a = (Expr *)v;
            ex(P, &tmp, 1);
        }
        sb_puts(o, ")");
    } else if (em_is_scalar(b) && b->dtype != v->dtype && b->dtype != DT_BOOL) {
        Expr tmp = {.kind = E_CAST, .dtype = b->dtype};   /* the typed array's wrap */
        tmp.u.cast.a = (Expr *)v;
        ex(P, &tmp, 1);
    } else if (em_is_scalar(b) && (b->dtype == DT_I8 || b->dtype == DT_U8 || b->dtype == DT_I16 ||
                                b->dtype == DT_U16)) {
        Expr tmp = {.kind = E_CAST, .dtype = b->dtype};
        Expr wide = {.kind = E_CAST, .dtype = DT_I32};
        wide.u.cast.a = (Expr *)v;
        tmp.u.cast.a = &wide;
        ex(P, &tmp, 1);
    } else if (is_big(b->dtype) && !is_big(v->dtype)) {
        Expr tmp = {.kind = E_CAST, .dtype = b->dtype};
        tmp.u.cast.a = (Expr *)v;
        ex(P, &tmp, 1);
    } else {
        ex(P, v, 1);
    }
    sb_puts(o, ";\n");
}

static void js_let(EmPrinter *E, const Stmt *s)
{
    J *P = (J *)E;
    char *name = fresh(P, s->u.let.var->name, 0);
    em_line(E);
    sb_printf(E->out, "const %s = ", name);
    ex(P, s->u.let.value, 1);
    sb_puts(E->out, ";\n");
    bind(P, s->u.let.var, name);
    em_stmt(E, s->u.let.body);
}

static void js_if_head(EmPrinter *E, const Stmt *s)
{
    sb_puts(E->out, "if (");
    ex((J *)E, s->u.cond.cond, 1);
    sb_puts(E->out, ") {\n");
}

static void js_barrier(EmPrinter *E, const Stmt *s)
{
    (void)E;
    ir_die("jsprint: statement kind %d (a GPU barrier?) in a JavaScript kernel", (int)s->kind);
}

static int js_scope_mark(EmPrinter *E) { return ((J *)E)->b.n; }
static void js_scope_pop(EmPrinter *E, int mark) { em_scope_pop(&((J *)E)->b, mark, 0); }

/* JavaScript has no cache hints: prefetches print nothing. */
static const EmStmtHooks js_hooks = {
    .loop = print_for,
    .let = js_let,
    .store = print_store,
    .alloc = print_alloc,
    .barrier = js_barrier,
    .prefetch = NULL,
    .if_head = js_if_head,
    .scope_mark = js_scope_mark,
    .scope_pop = js_scope_pop,
};

/* ---------------------------------------------------------------- functions */

void em_js_print_kernel(StrBuf *out, StrBuf *hoist, const Kernel *k, const char *fn, PtrVec *module_names,
                        int exported)
{
    J P = {0};
    StrBuf body = {0};
    P.em.out = &body;
    P.em.hooks = &js_hooks;
    P.hoist = hoist;
    P.k = k;
    P.fn = fn;
    P.module_names = module_names;
    P.em.depth = 1;
    /* parameters first, in order, so their names do not depend on the body */
    for (int i = 0; i < k->params.n; i++) {
        const Buffer *b = k->params.items[i];
        bind(&P, b, fresh(&P, b->name, 0));
    }
    /* then the run-time dims it reads (Numbers), after the buffers as in C */
    for (int i = 0; i < k->dims.n; i++)
        bind(&P, k->dims.items[i], fresh(&P, ((const Var *)k->dims.items[i])->name, 0));
    sb_puts(out, "/* ");
    em_comment_text(out, k->name);
    em_comment_notes(out, &k->notes, 0);
    for (int i = 0; i < k->params.n; i++) {
        const Buffer *b = k->params.items[i];
        sb_printf(out, "\n * %s: %s %s[", P.b.items[i].name, em_js_array_type(b->dtype), ir_dtype_name(b->dtype));
        for (int d = 0; d < b->ndim; d++)
            sb_printf(out, "%s%lld", d ? ", " : "", (long long)b->shape[d]);
        sb_puts(out, "]");
    }
    for (int i = 0; i < k->dims.n; i++)   /* (the shapes above: their bounds) */
        sb_printf(out, "%s%s%s", i ? ", " : "\n * ", P.b.items[k->params.n + i].name,
                  i == k->dims.n - 1 ? ": the dims decided at run time" : "");
    sb_puts(out, " */\n");
    sb_printf(out, "%sfunction %s(", exported ? "export " : "", fn);
    for (int i = 0; i < k->params.n + k->dims.n; i++)
        sb_printf(out, "%s%s", i ? ", " : "", P.b.items[i].name);
    if (!k->internal)
        sb_printf(out, "%sworkspace", k->params.n + k->dims.n ? ", " : "");
    sb_puts(out, ") {\n");
    em_stmt(&P.em, k->body);
    sb_puts(out, body.data ? body.data : "");
    sb_puts(out, "}\n");
    sb_free(&body);
    free(P.b.items);     /* (the names and P.used live in the IR arena) */
}
