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
 * requires: a lowered kernel; breaks: nothing. */
#include "jsemit.h"

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
    size_t n = s ? strlen(s) : 0;
    char *r = malloc(n + 4), *p = r;
    if (!r)
        ir_die("out of memory");
    if (!n || (s[0] >= '0' && s[0] <= '9'))
        *p++ = 'v', *p++ = '_';
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
        *p++ = ok ? c : '_';
    }
    *p = 0;
    if (js_is_reserved(r)) {
        char *q = malloc(strlen(r) + 3);
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
    const void *key;
    char *name;
} Bind;

typedef struct {
    StrBuf *out;           /* the function */
    StrBuf *hoist;         /* module-level declarations (local arrays) */
    const Kernel *k;
    const char *fn;
    int depth;
    Bind *b;               /* live bindings, innermost last */
    int nb, capb;
    char **used;           /* every name this function declared */
    int nused, capused;
    PtrVec *module_names;  /* names taken at module level (char*) */
} J;

static int taken(J *P, const char *s)
{
    if (js_is_reserved(s))
        return 1;
    for (int i = 0; i < P->nused; i++)
        if (!strcmp(P->used[i], s))
            return 1;
    for (int i = 0; i < P->module_names->n; i++)
        if (!strcmp(P->module_names->items[i], s))
            return 1;
    return 0;
}

/* A fresh name in this function: a loop variable reuses its name in sibling loops
 * (block scoped), everything else gets a name never used before here. */
static char *fresh(J *P, const char *raw, int loop)
{
    char *base = em_js_ident(raw), *s = NULL;
    for (int n = 0;; n++) {
        s = n ? ir_fmt("%s_%d", base, n) : ir_strdup(base);
        int busy = 0;
        if (loop) {
            busy = js_is_reserved(s);
            for (int i = 0; i < P->nb && !busy; i++)
                busy = !strcmp(P->b[i].name, s);
            for (int i = 0; i < P->module_names->n && !busy; i++)
                busy = !strcmp(P->module_names->items[i], s);
            for (int i = 0; i < P->nused && !busy; i++)   /* lets and buffers stay unique */
                busy = !strcmp(P->used[i], s) && strcmp(s, base);
        } else {
            busy = taken(P, s);
            for (int i = 0; i < P->nb && !busy; i++)
                busy = !strcmp(P->b[i].name, s);
        }
        if (!busy)
            break;
    }
    free(base);
    if (P->nused == P->capused) {
        P->capused = P->capused ? 2 * P->capused : 32;
        P->used = realloc(P->used, sizeof *P->used * (size_t)P->capused);
        if (!P->used)
            ir_die("out of memory");
    }
    P->used[P->nused++] = s;
    return s;
}

static void bind(J *P, const void *key, char *name)
{
    if (P->nb == P->capb) {
        P->capb = P->capb ? 2 * P->capb : 32;
        P->b = realloc(P->b, sizeof *P->b * (size_t)P->capb);
        if (!P->b)
            ir_die("out of memory");
    }
    P->b[P->nb].key = key;
    P->b[P->nb].name = name;
    P->nb++;
}

static const char *lookup(J *P, const void *key)
{
    for (int i = P->nb - 1; i >= 0; i--)
        if (P->b[i].key == key)
            return P->b[i].name;
    ir_die("jsprint: unbound variable or buffer");
    return NULL;
}

/* ---------------------------------------------------------------- expressions */

static void ex(J *P, const Expr *e, int top);

#define OPEN() do { if (!top) sb_puts(o, "("); } while (0)
#define CLOSE() do { if (!top) sb_puts(o, ")"); } while (0)

static int is_scalar(const Buffer *b)
{
    return b->scope == SCOPE_LOCAL && b->size == 1 && !ir_dtype_is_packed(b->dtype);
}

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
    for (int p = 1; p <= 17; p++) {
        snprintf(buf, sizeof buf, "%.*g", p, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    char *e = strchr(buf, 'e');
    if (e && atoi(e + 1) >= 0 && atoi(e + 1) < 16)
        snprintf(buf, sizeof buf, "%.*g", atoi(e + 1) + 1, v);
    sb_puts(o, buf);
}

static void put_const(J *P, double fv, int64_t iv, int isint, DType t, int top)
{
    StrBuf *o = P->out;
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
    StrBuf *o = P->out;
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
    StrBuf *o = P->out;
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
    StrBuf *o = P->out;
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

static const char *math_js(MathFn fn)
{
    switch (fn) {
    case FN_EXP: return "Math.exp";
    case FN_LOG: return "Math.log";
    case FN_SQRT: return "Math.sqrt";
    case FN_TANH: return "Math.tanh";
    case FN_ABS: return "Math.abs";
    case FN_FLOOR: return "Math.floor";
    case FN_CEIL: return "Math.ceil";
    case FN_TRUNC: return "Math.trunc";
    case FN_SIN: return "Math.sin";
    case FN_COS: return "Math.cos";
    case FN_TAN: return "Math.tan";
    case FN_ASIN: return "Math.asin";
    case FN_ACOS: return "Math.acos";
    case FN_ATAN: return "Math.atan";
    case FN_SINH: return "Math.sinh";
    case FN_COSH: return "Math.cosh";
    case FN_ASINH: return "Math.asinh";
    case FN_ACOSH: return "Math.acosh";
    case FN_ATANH: return "Math.atanh";
    case FN_RSQRT: return "k.rsqrt";
    case FN_SIGMOID: return "k.sigmoid";
    case FN_ERF: return "k.erf";
    case FN_POW: return "k.pow";
    case FN_ROUND: return "k.rint";
    case FN_ISNAN: return "Number.isNaN";
    case FN_ISINF: return "k.isinf";
    case FN_FMA: return "k.fma";
    default: return NULL;
    }
}

static void print_call(J *P, const Expr *e)
{
    StrBuf *o = P->out;
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
        sb_puts(o, math_js(fn));
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
    sb_printf(P->out, " %s ", tok);
    ex(P, b, 0);
}

static void print_bin(J *P, const Expr *e, int top)
{
    StrBuf *o = P->out;
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
    StrBuf *o = P->out;
    sb_puts(o, lookup(P, b));
    if (is_scalar(b))
        return;
    sb_puts(o, "[");
    ex(P, index, 1);
    sb_puts(o, "]");
}

/* a packed element's code: k.u4(buf, index), sign-extended for i4 and i2 (k.i4) */
static void packed_code(J *P, const Buffer *b, const Expr *index, int raw)
{
    StrBuf *o = P->out;
    int bits = ir_dtype_bits(b->dtype);
    sb_printf(o, "k.%c%d(%s, ", !raw && (b->dtype == DT_I4 || b->dtype == DT_I2) ? 'i' : 'u', bits, lookup(P, b));
    ex(P, index, 1);
    sb_puts(o, ")");
}

static void ex(J *P, const Expr *e, int top)
{
    StrBuf *o = P->out;
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

static void line(J *P) { sb_indent(P->out, P->depth); }

static void stmt(J *P, const Stmt *s);

static void block(J *P, const Stmt *s)
{
    int mark = P->nb;
    P->depth++;
    stmt(P, s);
    P->depth--;
    P->nb = mark;
}

static void print_for(J *P, const Stmt *s)
{
    Var *v = s->u.loop.var;
    const Expr *min = s->u.loop.min, *ext = s->u.loop.extent;
    int mark = P->nb;
    char *name = fresh(P, v->name, 1);
    line(P);
    sb_printf(P->out, "for (let %s = ", name);
    ex(P, min, 1);
    sb_printf(P->out, "; %s < ", name);
    int64_t lo, n;
    if (ir_expr_is_const(min, &lo) && lo == 0)
        ex(P, ext, 0);
    else if (ir_expr_is_const(min, &lo) && ir_expr_is_const(ext, &n))
        sb_printf(P->out, "%lld", (long long)(lo + n));
    else {
        ex(P, min, 0);
        sb_puts(P->out, " + ");
        ex(P, ext, 0);
    }
    sb_printf(P->out, "; %s++) {", name);
    switch (s->u.loop.kind) {
    case FOR_UNROLLED: sb_puts(P->out, " /* unrolled */"); break;
    case FOR_VECTORIZED: sb_puts(P->out, " /* vectorized */"); break;
    case FOR_PARALLEL: sb_puts(P->out, " /* parallel */"); break;
    case FOR_BOUND: sb_printf(P->out, " /* %s */", s->u.loop.bind_tag ? s->u.loop.bind_tag : "bound"); break;
    default: break;
    }
    sb_puts(P->out, "\n");
    bind(P, v, name);
    block(P, s->u.loop.body);
    line(P);
    sb_printf(P->out, "} /* %s */\n", name);
    P->nb = mark;
}

static void print_alloc(J *P, const Stmt *s)
{
    const Buffer *b = s->u.alloc.buf;
    StrBuf *o = P->out;
    int mark = P->nb;
    char *name;
    if (is_scalar(b)) {
        name = fresh(P, b->name, 0);
        line(P);
        sb_printf(o, "let %s = %s;\n", name, is_big(b->dtype) ? "0n" : "0");
    } else if (b->scope == SCOPE_WORKSPACE) {
        name = fresh(P, b->name, 0);
        line(P);
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
    stmt(P, s->u.alloc.body);
    P->nb = mark;
}

static void print_store(J *P, const Stmt *s)
{
    StrBuf *o = P->out;
    const Buffer *b = s->u.store.buf;
    const Expr *v = s->u.store.value;
    line(P);
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
    } else if (is_scalar(b) && b->dtype != v->dtype && b->dtype != DT_BOOL) {
        Expr tmp = {.kind = E_CAST, .dtype = b->dtype};   /* the typed array's wrap */
        tmp.u.cast.a = (Expr *)v;
        ex(P, &tmp, 1);
    } else if (is_scalar(b) && (b->dtype == DT_I8 || b->dtype == DT_U8 || b->dtype == DT_I16 ||
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

static void stmt(J *P, const Stmt *s)
{
    if (!s)
        return;
    StrBuf *o = P->out;
    switch (s->kind) {
    case S_FOR: print_for(P, s); break;
    case S_LET: {
        char *name = fresh(P, s->u.let.var->name, 0);
        line(P);
        sb_printf(o, "const %s = ", name);
        ex(P, s->u.let.value, 1);
        sb_puts(o, ";\n");
        bind(P, s->u.let.var, name);
        stmt(P, s->u.let.body);
        break;
    }
    case S_IF:
        line(P);
        for (;;) {
            sb_puts(o, "if (");
            ex(P, s->u.cond.cond, 1);
            sb_puts(o, ") {\n");
            block(P, s->u.cond.then);
            line(P);
            const Stmt *els = s->u.cond.els;
            if (!els) {
                sb_puts(o, "}\n");
                break;
            }
            if (els->kind == S_IF) {
                sb_puts(o, "} else ");
                s = els;
                continue;
            }
            sb_puts(o, "} else {\n");
            block(P, els);
            line(P);
            sb_puts(o, "}\n");
            break;
        }
        break;
    case S_STORE: print_store(P, s); break;
    case S_ALLOC: print_alloc(P, s); break;
    case S_SEQ:
        for (int i = 0; i < s->u.seq.n; i++)
            stmt(P, s->u.seq.items[i]);
        break;
    case S_COMMENT:
        line(P);
        sb_puts(o, "/* ");
        em_comment_text(o, s->u.comment);
        sb_puts(o, " */\n");
        break;
    case S_PREFETCH: break;   /* JavaScript has no cache hints */
    default: ir_die("jsprint: statement kind %d (a GPU barrier?) in a JavaScript kernel", (int)s->kind);
    }
}

/* ---------------------------------------------------------------- functions */

void em_js_print_kernel(StrBuf *out, StrBuf *hoist, const Kernel *k, const char *fn, PtrVec *module_names,
                        int exported)
{
    J P = {0};
    StrBuf body = {0};
    P.out = &body;
    P.hoist = hoist;
    P.k = k;
    P.fn = fn;
    P.module_names = module_names;
    P.depth = 1;
    /* parameters first, in order, so their names do not depend on the body */
    for (int i = 0; i < k->params.n; i++) {
        const Buffer *b = k->params.items[i];
        bind(&P, b, fresh(&P, b->name, 0));
    }
    sb_puts(out, "/* ");
    em_comment_text(out, k->name);
    for (int i = 0; i < k->notes.n; i++) {
        sb_puts(out, "\n * ");
        em_comment_text(out, k->notes.items[i]);
    }
    for (int i = 0; i < k->params.n; i++) {
        const Buffer *b = k->params.items[i];
        sb_printf(out, "\n * %s: %s %s[", P.b[i].name, em_js_array_type(b->dtype), ir_dtype_name(b->dtype));
        for (int d = 0; d < b->ndim; d++)
            sb_printf(out, "%s%lld", d ? ", " : "", (long long)b->shape[d]);
        sb_puts(out, "]");
    }
    sb_puts(out, " */\n");
    sb_printf(out, "%sfunction %s(", exported ? "export " : "", fn);
    for (int i = 0; i < k->params.n; i++)
        sb_printf(out, "%s%s", i ? ", " : "", P.b[i].name);
    if (!k->internal)
        sb_printf(out, "%sworkspace", k->params.n ? ", " : "");
    sb_puts(out, ") {\n");
    stmt(&P, k->body);
    sb_puts(out, body.data ? body.data : "");
    sb_puts(out, "}\n");
    sb_free(&body);
    free(P.b);
    free(P.used);
}
