/* interp.c - runs a lowered kernel on the host: constant folding of operators whose
 * inputs are all known, and a reference for tests.
 * requires: a kernel from ir_lower; breaks: nothing.
 * Values follow the printed C: f32 math in float, f16 values computed in float and
 * rounded at stores, integers wrapped to their type, select evaluating one side. */
#include "ir.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef union {
    int64_t i;
    double f;
} Val;

typedef struct {
    const Var *var;
    int64_t value;
} Binding;

typedef struct {
    const Buffer *buf;
    unsigned char *data;
} Mem;

typedef struct {
    Binding *vars;
    int nvars, capvars;
    Mem *mems;
    int nmems, capmems;
    int failed;
} Interp;

static void bind(Interp *I, const Var *v, int64_t value)
{
    if (I->nvars == I->capvars) {
        I->capvars = I->capvars ? I->capvars * 2 : 32;
        I->vars = realloc(I->vars, sizeof *I->vars * (size_t)I->capvars);
        if (!I->vars)
            ir_die("out of memory");
    }
    I->vars[I->nvars++] = (Binding){v, value};
}

static int64_t lookup(Interp *I, const Var *v)
{
    for (int i = I->nvars - 1; i >= 0; i--)
        if (I->vars[i].var == v)
            return I->vars[i].value;
    ir_die("interp: unbound variable %s", v->name);
    return 0;
}

static void map_mem(Interp *I, const Buffer *b, unsigned char *data)
{
    if (I->nmems == I->capmems)
        I->mems = ir_grow(I->mems, &I->capmems, sizeof *I->mems, 16);
    I->mems[I->nmems++] = (Mem){b, data};
}

static unsigned char *mem_of(Interp *I, const Buffer *b)
{
    for (int i = I->nmems - 1; i >= 0; i--)
        if (I->mems[i].buf == b)
            return I->mems[i].data;
    ir_die("interp: no memory for buffer %s", b->name);
    return NULL;
}

/* round a float result to its type */
static double fround(double v, DType t) { return t == DT_F64 ? v : (double)(float)v; }

static float h2f(uint16_t h)
{
    uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
    if (exp == 0) {
        if (man == 0)
            bits = sign;
        else {
            exp = 127 - 15 + 1;
            while (!(man & 0x400)) {
                man <<= 1;
                exp--;
            }
            bits = sign | (exp << 23) | ((man & 0x3ff) << 13);
        }
    } else if (exp == 31)
        bits = sign | 0x7f800000u | (man << 13);
    else
        bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

static uint16_t f2h(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000, exp = (x >> 23) & 0xff, man = x & 0x7fffff;
    if (exp == 0xff)   /* inf; a NaN stays quiet and keeps its payload, as in the runtime */
        return (uint16_t)(sign | 0x7c00 | (man ? 0x200 | (man >> 13) : 0));
    int e = (int)exp - 127 + 15;
    if (e >= 31)
        return (uint16_t)(sign | 0x7c00);
    if (e <= 0) {
        if (e < -10)
            return (uint16_t)sign;
        man |= 0x800000;
        int shift = 14 - e;
        uint32_t h = man >> shift, rem = man & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (h & 1)))
            h++;
        return (uint16_t)(sign | h);
    }
    uint32_t h = ((uint32_t)e << 10) | (man >> 13), rem = man & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (h & 1)))
        h++;
    return (uint16_t)(sign | h);
}

/* bf16 and the float8 types, as templates/kgen_runtime.h converts them (kind: 0 e5m2,
 * 1 FN, 2 FNUZ; maxcode: the bits of the largest finite magnitude) */
static float bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static float f8_to_f32(uint8_t v, uint32_t m, uint32_t bias, int kind)
{
    uint32_t sign = (uint32_t)(v & 0x80u) << 24, exp = (v & 0x7fu) >> m, man = v & ((1u << m) - 1u);
    if (kind == 2 && v == 0x80u)
        return bits_f32(0x7fc00000u);
    if (kind == 1 && (v & 0x7fu) == 0x7fu)
        return bits_f32(sign | 0x7fc00000u);
    if (kind == 0 && exp == (0x7fu >> m))
        return bits_f32(sign | 0x7f800000u | (man << (23 - m)));
    if (exp)
        return bits_f32(sign | ((exp + 127 - bias) << 23) | (man << (23 - m)));
    if (!man)
        return bits_f32(sign);
    uint32_t e = 128 - bias;
    while (!(man & (1u << m))) {
        man <<= 1;
        e--;
    }
    return bits_f32(sign | (e << 23) | ((man & ((1u << m) - 1u)) << (23 - m)));
}

static uint8_t f32_to_f8(float f, uint32_t m, uint32_t bias, int kind, uint32_t maxcode)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 24) & 0x80u, exp = (x >> 23) & 0xffu, man = x & 0x7fffffu;
    uint32_t nan = kind == 2 ? 0x80u : sign | (kind == 1 ? 0x7fu : 0x7eu);
    uint32_t over = kind == 0 ? sign | 0x7cu : nan, zero = kind == 2 ? 0u : sign, h, rem, half;
    int32_t e = (int32_t)exp - 127 + (int32_t)bias;
    if (exp == 0xffu)
        return (uint8_t)(man ? nan : over);
    if (e <= 0) {
        if (e < -24 || (uint32_t)(24 - e) - m > 25)
            return (uint8_t)zero;
        uint32_t shift = (uint32_t)(24 - e) - m;
        man |= 0x800000u;
        h = man >> shift, rem = man & ((1u << shift) - 1), half = 1u << (shift - 1);
    } else {
        h = ((uint32_t)e << m) | (man >> (23 - m)), rem = man & ((1u << (23 - m)) - 1), half = 1u << (22 - m);
    }
    if (rem > half || (rem == half && (h & 1)))
        h++;
    return (uint8_t)(h > maxcode ? over : h ? sign | h : zero);
}

/* f4e2m1: sign, 2 exponent bits (bias 1), 1 mantissa bit; codes 0..7 are 0, 0.5, 1, 1.5,
 * 2, 3, 4, 6 */
static float f4_to_f32(unsigned c)
{
    unsigned m = c & 7u;
    return bits_f32(((c & 8u) << 28) | (m < 2u ? m * 0x3f000000u : (m + 252u) << 22));
}

/* round to nearest even, saturating at 6; NaN gives code 8, as ONNX's reference does */
static uint8_t f32_to_f4(float f)
{
    if (f != f)
        return 8;
    float a = fabsf(f);
    uint8_t m = a <= 0.25f ? 0 : a < 0.75f ? 1 : a <= 1.25f ? 2 : a < 1.75f ? 3 : a <= 2.5f ? 4 : a < 3.5f ? 5
              : a <= 5.0f ? 6 : 7;
    return (uint8_t)(m | (signbit(f) ? 8u : 0u));
}

/* f8e8m0: 2^(e-127), 255 is NaN */
static float e8m0_to_f32(uint8_t e)
{
    return e == 255 ? bits_f32(0x7fc00000u) : e ? bits_f32((uint32_t)e << 23) : bits_f32(0x400000u);
}

/* the exponent of |f| rounded up to the next power of two, saturating at 2^127 (inf too) */
static uint8_t f32_to_e8m0(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t e = (x >> 23) & 0xffu, m = x & 0x7fffffu;
    if (e == 255)
        return m ? 255 : 254;
    if (e == 0)   /* zero and subnormals: code 0 is 2^-127, the subnormal 0x400000 */
        return m > 0x400000u;
    e += m != 0;
    return (uint8_t)(e > 254 ? 254 : e);
}

float ir_storage_to_f32(DType t, const void *p)
{
    uint16_t x = 0;
    uint8_t b = *(const uint8_t *)p;
    if (ir_dtype_bytes(t) == 2)
        memcpy(&x, p, 2);
    switch (t) {
    case DT_F16: return h2f(x);
    case DT_BF16: return bits_f32((uint32_t)x << 16);
    case DT_F8E4M3FN: return f8_to_f32(b, 3, 7, 1);
    case DT_F8E4M3FNUZ: return f8_to_f32(b, 3, 8, 2);
    case DT_F8E5M2: return f8_to_f32(b, 2, 15, 0);
    case DT_F8E5M2FNUZ: return f8_to_f32(b, 2, 16, 2);
    case DT_F4E2M1: return f4_to_f32(b & 15u);   /* p: the code, unpacked */
    case DT_F8E8M0: return e8m0_to_f32(b);
    default: ir_die("ir_storage_to_f32: %s is not a storage type", ir_dtype_name(t));
    }
    return 0;
}

void ir_f32_to_storage(DType t, float v, void *p)
{
    uint16_t x;
    uint8_t *b = p;
    switch (t) {
    case DT_F16: x = f2h(v); memcpy(p, &x, 2); return;
    case DT_BF16: {
        uint32_t u;
        memcpy(&u, &v, 4);
        x = (u & 0x7fffffffu) > 0x7f800000u ? (uint16_t)((u >> 16) | 0x40u)
                                            : (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
        memcpy(p, &x, 2);
        return;
    }
    case DT_F8E4M3FN: *b = f32_to_f8(v, 3, 7, 1, 0x7e); return;
    case DT_F8E4M3FNUZ: *b = f32_to_f8(v, 3, 8, 2, 0x7f); return;
    case DT_F8E5M2: *b = f32_to_f8(v, 2, 15, 0, 0x7b); return;
    case DT_F8E5M2FNUZ: *b = f32_to_f8(v, 2, 16, 2, 0x7f); return;
    case DT_F4E2M1: *b = f32_to_f4(v); return;
    case DT_F8E8M0: *b = f32_to_e8m0(v); return;
    default: ir_die("ir_f32_to_storage: %s is not a storage type", ir_dtype_name(t));
    }
}

static Val load_elem(const unsigned char *p, DType t)
{
    Val v = {0};
    switch (t) {
    case DT_BOOL:
    case DT_U8: v.i = *p; break;
    case DT_I8: v.i = (int8_t)*p; break;
    case DT_I16: { int16_t x; memcpy(&x, p, 2); v.i = x; break; }
    case DT_U16: { uint16_t x; memcpy(&x, p, 2); v.i = x; break; }
    case DT_I32: { int32_t x; memcpy(&x, p, 4); v.i = x; break; }
    case DT_U32: { uint32_t x; memcpy(&x, p, 4); v.i = x; break; }
    case DT_I64:
    case DT_U64: memcpy(&v.i, p, 8); break;
    case DT_F16: { uint16_t x; memcpy(&x, p, 2); v.f = h2f(x); break; }
    case DT_F32: { float x; memcpy(&x, p, 4); v.f = x; break; }
    case DT_F64: memcpy(&v.f, p, 8); break;
    default:
        if (ir_dtype_is_storage(t))
            v.f = ir_storage_to_f32(t, p);
        break;
    }
    return v;
}

static void store_elem(unsigned char *p, DType t, Val v)
{
    switch (t) {
    case DT_BOOL: *p = v.i != 0; break;
    case DT_U8:
    case DT_I8: *p = (unsigned char)v.i; break;
    case DT_I16:
    case DT_U16: { uint16_t x = (uint16_t)v.i; memcpy(p, &x, 2); break; }
    case DT_I32:
    case DT_U32: { uint32_t x = (uint32_t)v.i; memcpy(p, &x, 4); break; }
    case DT_I64:
    case DT_U64: memcpy(p, &v.i, 8); break;
    case DT_F16: { uint16_t x = f2h((float)v.f); memcpy(p, &x, 2); break; }
    case DT_F32: { float x = (float)v.f; memcpy(p, &x, 4); break; }
    case DT_F64: memcpy(p, &v.f, 8); break;
    default:
        if (ir_dtype_is_storage(t))
            ir_f32_to_storage(t, (float)v.f, p);
        break;
    }
}

/* element i of a packed array (ir.h) */
static Val load_packed(const unsigned char *base, int64_t i, DType t)
{
    Val v = {0};
    v.i = ir_packed_get(t, base, i);
    if (t == DT_F4E2M1) {
        unsigned char code[2] = {(unsigned char)v.i, 0};
        v.f = ir_storage_to_f32(t, code);
    }
    return v;
}

static void store_packed(unsigned char *base, int64_t i, DType t, Val v)
{
    unsigned char code[2] = {0, 0};
    if (t == DT_F4E2M1)
        ir_f32_to_storage(t, (float)v.f, code);
    ir_packed_set(t, base, i, t == DT_F4E2M1 ? code[0] : v.i);
}

static Val eval(Interp *I, const Expr *e);

static int64_t index_of(Interp *I, const Buffer *b, const Expr *index)
{
    int64_t i = eval(I, index).i;
    if (i < 0 || i >= b->size) {
        if (!I->failed)
            ir_fail("interp: index %lld of %s is outside 0..%lld", (long long)i, b->name, (long long)(b->size - 1));
        I->failed = 1;
        return -1;
    }
    return i;
}

static double fmath(MathFn fn, double a, double b, double c, int f32)
{
    switch (fn) {
    case FN_EXP: return f32 ? expf((float)a) : exp(a);
    case FN_LOG: return f32 ? logf((float)a) : log(a);
    case FN_SQRT: return f32 ? sqrtf((float)a) : sqrt(a);
    case FN_RSQRT: return f32 ? 1.0f / sqrtf((float)a) : 1.0 / sqrt(a);
    case FN_TANH: return f32 ? tanhf((float)a) : tanh(a);
    case FN_SIGMOID: return f32 ? 1.0f / (1.0f + expf(-(float)a)) : 1.0 / (1.0 + exp(-a));
    case FN_ERF: return f32 ? erff((float)a) : erf(a);
    case FN_POW: return f32 ? powf((float)a, (float)b) : pow(a, b);
    case FN_ABS: return fabs(a);
    case FN_FLOOR: return floor(a);
    case FN_CEIL: return ceil(a);
    case FN_ROUND: return nearbyint(a);
    case FN_TRUNC: return trunc(a);
    case FN_SIN: return f32 ? sinf((float)a) : sin(a);
    case FN_COS: return f32 ? cosf((float)a) : cos(a);
    case FN_TAN: return f32 ? tanf((float)a) : tan(a);
    case FN_ASIN: return f32 ? asinf((float)a) : asin(a);
    case FN_ACOS: return f32 ? acosf((float)a) : acos(a);
    case FN_ATAN: return f32 ? atanf((float)a) : atan(a);
    case FN_SINH: return f32 ? sinhf((float)a) : sinh(a);
    case FN_COSH: return f32 ? coshf((float)a) : cosh(a);
    case FN_ASINH: return f32 ? asinhf((float)a) : asinh(a);
    case FN_ACOSH: return f32 ? acoshf((float)a) : acosh(a);
    case FN_ATANH: return f32 ? atanhf((float)a) : atanh(a);
    case FN_FMA: return f32 ? fmaf((float)a, (float)b, (float)c) : fma(a, b, c);
    default: break;
    }
    return 0;
}

static int64_t floordiv64(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

static Val eval_bin(Interp *I, const Expr *e)
{
    Val r = {0}, a = eval(I, e->u.bin.a), b = eval(I, e->u.bin.b);
    DType t = e->u.bin.a->dtype;
    BinOp op = e->u.bin.op;
    if (ir_dtype_is_float(t)) {
        double x = a.f, y = b.f;
        switch (op) {
        case OP_ADD: r.f = x + y; break;
        case OP_SUB: r.f = x - y; break;
        case OP_MUL: r.f = x * y; break;
        case OP_DIV: r.f = x / y; break;
        case OP_MOD: r.f = fmod(x, y); break;
        case OP_FLOORDIV: r.f = floor(x / y); break;
        case OP_FLOORMOD: r.f = x - floor(x / y) * y; break;
        case OP_MIN: r.f = isnan(x) || isnan(y) ? NAN : x < y ? x : y; break;
        case OP_MAX: r.f = isnan(x) || isnan(y) ? NAN : x > y ? x : y; break;
        case OP_EQ: r.i = x == y; return r;
        case OP_NE: r.i = x != y; return r;
        case OP_LT: r.i = x < y; return r;
        case OP_LE: r.i = x <= y; return r;
        case OP_GT: r.i = x > y; return r;
        case OP_GE: r.i = x >= y; return r;
        default: ir_die("interp: float %s", ir_binop_text(op));
        }
        r.f = fround(r.f, e->dtype);
        return r;
    }
    int64_t x = a.i, y = b.i;
    int uns = !ir_dtype_is_signed(t);
    uint64_t ux = (uint64_t)x, uy = (uint64_t)y;
    switch (op) {
    case OP_ADD: r.i = (int64_t)(ux + uy); break;
    case OP_SUB: r.i = (int64_t)(ux - uy); break;
    case OP_MUL: r.i = (int64_t)(ux * uy); break;
    case OP_DIV:
    case OP_MOD:
    case OP_FLOORDIV:
    case OP_FLOORMOD:
        if (y == 0) {
            if (!I->failed)
                ir_fail("interp: integer division by zero");
            I->failed = 1;
            return r;
        }
        if (uns) {
            r.i = (int64_t)(op == OP_DIV || op == OP_FLOORDIV ? ux / uy : ux % uy);
        } else if (x == INT64_MIN && y == -1) {
            r.i = op == OP_DIV || op == OP_FLOORDIV ? x : 0;
        } else if (op == OP_DIV)
            r.i = x / y;
        else if (op == OP_MOD)
            r.i = x % y;
        else if (op == OP_FLOORDIV)
            r.i = floordiv64(x, y);
        else
            r.i = x - floordiv64(x, y) * y;
        break;
    case OP_MIN: r.i = uns ? (ux < uy ? x : y) : (x < y ? x : y); break;
    case OP_MAX: r.i = uns ? (ux > uy ? x : y) : (x > y ? x : y); break;
    case OP_EQ: r.i = x == y; return r;
    case OP_NE: r.i = x != y; return r;
    case OP_LT: r.i = uns ? ux < uy : x < y; return r;
    case OP_LE: r.i = uns ? ux <= uy : x <= y; return r;
    case OP_GT: r.i = uns ? ux > uy : x > y; return r;
    case OP_GE: r.i = uns ? ux >= uy : x >= y; return r;
    case OP_AND: r.i = x && y; return r;
    case OP_OR: r.i = x || y; return r;
    case OP_BITAND: r.i = x & y; break;
    case OP_BITOR: r.i = x | y; break;
    case OP_BITXOR: r.i = x ^ y; break;
    case OP_SHL: r.i = y < 0 || y >= 64 ? 0 : (int64_t)(ux << y); break;
    case OP_SHR: r.i = y < 0 || y >= 64 ? 0 : uns ? (int64_t)(ux >> y) : (int64_t)(ux >> y); break;
    default: ir_die("interp: %s", ir_binop_text(op));
    }
    r.i = ir_wrap_int(r.i, e->dtype);
    return r;
}

static Val eval(Interp *I, const Expr *e)
{
    Val r = {0};
    switch (e->kind) {
    case E_INT: r.i = e->u.ival; return r;
    case E_FLOAT: r.f = e->u.fval; return r;
    case E_VAR: r.i = lookup(I, e->u.var); return r;
    case E_BIN: return eval_bin(I, e);
    case E_UN: {
        Val a = eval(I, e->u.un.a);
        if (e->u.un.op == UN_NOT)
            r.i = !a.i;
        else if (e->u.un.op == UN_BITNOT)
            r.i = ir_wrap_int(~a.i, e->dtype);
        else if (ir_dtype_is_float(e->dtype))
            r.f = -a.f;
        else
            r.i = ir_wrap_int((int64_t)(0 - (uint64_t)a.i), e->dtype);
        return r;
    }
    case E_CALL: {
        Val a[KG_MAX_ARGS] = {{0}};
        int n = ir_mathfn_arity(e->u.call.fn);
        for (int i = 0; i < n; i++)
            a[i] = eval(I, e->u.call.args[i]);
        DType t = e->u.call.args[0]->dtype;
        if (e->u.call.fn == FN_ISNAN) {
            r.i = isnan(a[0].f);
            return r;
        }
        if (e->u.call.fn == FN_ISINF) {
            r.i = isinf(a[0].f);
            return r;
        }
        if (!ir_dtype_is_float(t)) {   /* integer abs */
            r.i = ir_wrap_int(a[0].i < 0 ? (int64_t)(0 - (uint64_t)a[0].i) : a[0].i, t);
            return r;
        }
        r.f = fround(fmath(e->u.call.fn, a[0].f, a[1].f, a[2].f, t != DT_F64), e->dtype);
        return r;
    }
    case E_CAST: {
        Val a = eval(I, e->u.cast.a);
        DType from = e->u.cast.a->dtype, to = e->dtype;
        if (ir_dtype_is_float(from) && ir_dtype_is_float(to))
            r.f = fround(a.f, to);
        else if (ir_dtype_is_float(from)) {
            if (to == DT_BOOL)
                r.i = a.f != 0;
            else if (isnan(a.f))
                r.i = 0;
            else if (to == DT_U64)
                r.i = a.f >= 18446744073709551616.0 ? -1 : a.f <= 0 ? 0 : (int64_t)(uint64_t)a.f;
            else
                r.i = ir_wrap_int(a.f >= 9.2e18 ? INT64_MAX : a.f <= -9.2e18 ? INT64_MIN : (int64_t)a.f, to);
        } else if (ir_dtype_is_float(to))
            r.f = fround(from == DT_U64 ? (double)(uint64_t)a.i : (double)a.i, to);
        else
            r.i = ir_wrap_int(a.i, to);
        if (ir_dtype_is_storage(to) && from != to) {   /* the value takes the type's precision */
            unsigned char tmp[2];
            ir_f32_to_storage(to, (float)r.f, tmp);
            r.f = ir_storage_to_f32(to, tmp);
        }
        return r;
    }
    case E_BITCAST: {   /* through memory, as the element types are stored */
        unsigned char bytes[8] = {0};
        store_elem(bytes, e->u.cast.a->dtype, eval(I, e->u.cast.a));
        return load_elem(bytes, e->dtype);
    }
    case E_SELECT: return eval(I, e->u.sel.cond).i ? eval(I, e->u.sel.t) : eval(I, e->u.sel.f);
    case E_LOAD: {
        const Buffer *b = e->u.load.buf;
        int64_t i = index_of(I, b, e->u.load.index);
        if (i < 0)
            return r;
        if (ir_dtype_is_packed(b->dtype))
            return load_packed(mem_of(I, b), i, b->dtype);
        return load_elem(mem_of(I, b) + i * ir_dtype_bytes(b->dtype), b->dtype);
    }
    case E_ACCESS:
    case E_REDUCE: ir_die("interp: tensor IR expression in a kernel");
    }
    return r;
}

static void exec(Interp *I, const Stmt *s)
{
    if (!s || I->failed)
        return;
    switch (s->kind) {
    case S_FOR: {
        int64_t lo = eval(I, s->u.loop.min).i, n = eval(I, s->u.loop.extent).i;
        for (int64_t i = 0; i < n && !I->failed; i++) {
            bind(I, s->u.loop.var, lo + i);
            exec(I, s->u.loop.body);
            I->nvars--;
        }
        return;
    }
    case S_LET:
        bind(I, s->u.let.var, eval(I, s->u.let.value).i);
        exec(I, s->u.let.body);
        I->nvars--;
        return;
    case S_IF:
        if (eval(I, s->u.cond.cond).i)
            exec(I, s->u.cond.then);
        else
            exec(I, s->u.cond.els);
        return;
    case S_STORE: {
        const Buffer *b = s->u.store.buf;
        int64_t i = index_of(I, b, s->u.store.index);
        Val v = eval(I, s->u.store.value);
        if (i >= 0 && ir_dtype_is_packed(b->dtype))
            store_packed(mem_of(I, b), i, b->dtype, v);
        else if (i >= 0)
            store_elem(mem_of(I, b) + i * ir_dtype_bytes(b->dtype), b->dtype, v);
        return;
    }
    case S_ALLOC: {
        const Buffer *b = s->u.alloc.buf;
        if (b->scope == SCOPE_WORKSPACE) {
            exec(I, s->u.alloc.body);   /* mapped up front */
            return;
        }
        unsigned char *mem = calloc((size_t)ir_dtype_size(b->dtype, b->size), 1);
        if (!mem)
            ir_die("out of memory");
        map_mem(I, b, mem);
        exec(I, s->u.alloc.body);
        I->nmems--;
        free(mem);
        return;
    }
    case S_SEQ:
        for (int i = 0; i < s->u.seq.n; i++)
            exec(I, s->u.seq.items[i]);
        return;
    case S_COMMENT:
    case S_PREFETCH:
    case S_BARRIER: return;
    }
}

int ir_interp(const Kernel *k, void **params, void *workspace)
{
    Interp I = {0};
    for (int i = 0; i < k->params.n; i++)
        map_mem(&I, k->params.items[i], params[i]);
    for (int i = 0; i < k->locals.n; i++) {
        const Buffer *b = k->locals.items[i];
        if (b->scope == SCOPE_WORKSPACE)
            map_mem(&I, b, (unsigned char *)workspace + b->ws_offset);
    }
    exec(&I, k->body);
    free(I.vars);
    free(I.mems);
    return I.failed ? -1 : 0;
}
