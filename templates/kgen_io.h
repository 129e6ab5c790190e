/* kgen_io.h - header-only host-side tensor I/O for the programs that run generated models:
 * the runner (kgen_main.h), the conformance driver and anyone's own test harness.
 *
 * Reads a tensor from a NumPy `.npy` file (format versions 1.0, 2.0 and 3.0; C order;
 * little-endian bool, int8..int64, uint8..uint64, float16, float32 and float64) or from a
 * serialized ONNX TensorProto `.pb` file (dims, data_type and one of raw_data,
 * float_data, int32_data, int64_data, double_data, uint64_data; repeated fields packed or
 * not), into a malloc'd buffer with its dtype and shape. Writes a `.npy` file (v1.0).
 *
 * The packed types int4, uint4, int2, uint2 and float4_e2m1 (DLPack: INT, UINT or FLOAT
 * with 4 or 2 bits) are held as ONNX stores them, 8 / bits elements per byte, the first
 * in the low bits; nbytes is then count * bits / 8 rounded up (kgen_io_packed_get reads
 * one element). NumPy has no such types: a .npy input for an int4 or int2 model input
 * is an int8 array, and for uint4 or uint2 a uint8 array, one element per value, which
 * kgen_io_pack turns into the packed form (a value out of range is an error); such an
 * output is written to .npy the same way, one int8 or uint8 per element. float4_e2m1 and
 * float8_e8m0 (FLOAT, 8 bits) are read from .pb files only, as the float8 types are.
 *
 *     kgen_io_tensor t;
 *     char err[256];
 *     if (kgen_io_read("x.npy", &t, err, sizeof err) != KGEN_IO_OK) {
 *         fprintf(stderr, "%s\n", err);          // "x.npy: shape (2, 3) of float32 needs ..."
 *         return 1;
 *     }
 *     kgen_tensor view = kgen_io_view(&t);       // a DLTensor over the same memory
 *     ...
 *     kgen_io_write_npy("y.npy", t.dtype, t.ndim, t.shape, t.data, err, sizeof err);
 *     kgen_io_free(&t);
 *
 * The functions:
 *     kgen_io_read(path, t, err, n)         .npy or .pb, by the file's extension
 *     kgen_io_read_npy / kgen_io_read_pb    one format, whatever the extension
 *     kgen_io_parse_npy / kgen_io_parse_pb  the same from a buffer (buf, len)
 *     kgen_io_write_npy(path, dtype, ndim, shape, data, err, n)
 *     kgen_io_encode_npy(...)               the .npy bytes in a malloc'd buffer
 *     kgen_io_alloc(t, dtype, ndim, shape)  a zeroed tensor (for outputs)
 *     kgen_io_view(t)                       a kgen_tensor (DLTensor) over t
 *     kgen_io_free(t)                       frees and zeroes t (any state, even zeroed)
 *     kgen_io_dtype / _dtype_size / _dtype_equal / _dtype_name, kgen_io_format_type
 *     kgen_io_slurp(path, &len, err, n)     a whole file in a malloc'd buffer
 *
 * Why files are read whole and decoded from memory: the parsers take (buffer, length)
 * and check every offset against the length before using it, so a truncated or hostile
 * file yields an error message in the caller's buffer, never a read past the end, and
 * the same parsers are tested on hand-made byte strings. No shape is trusted for an
 * allocation before the data it claims is known to be in the file.
 *
 * Functions return KGEN_IO_OK (0) or KGEN_IO_ERR (-1); on error the message (without a
 * trailing newline, file path first for the read_ and write_ functions) is in `err`,
 * which may be NULL when the caller does not care. Tensor data is in host byte order and
 * 64-byte aligned, and is never NULL after a successful read, even for zero elements,
 * so it can be handed to the generated NAME_tensors() entry points.
 *
 * Needs a C99 compiler and libc (<stdio.h>, <stdlib.h>, <string.h>, <stdarg.h>,
 * <errno.h>) and kgen_runtime.h next to it. Everything is prefixed kgen_io_ / KGEN_IO_;
 * names ending in `_` are private. Compiles warning-free as C99 with -Wall -Wextra
 * -pedantic. Big-endian hosts are supported: data is byte-swapped on the way in and out.
 */
#ifndef KGEN_IO_H
#define KGEN_IO_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kgen_runtime.h"

#define KGEN_IO_OK 0
#define KGEN_IO_ERR (-1)

/* More than kgen_value_info holds, so a file of higher rank still gets a useful "shape
 * mismatch" message instead of "too many dimensions". */
#define KGEN_IO_MAX_DIMS 16

/* The largest file kgen_io_slurp reads (and so every reader): 8 GiB, 1 GiB where size_t
 * has 32 bits. Define it before including this file to change it. */
#ifndef KGEN_IO_MAX_FILE_BYTES
#define KGEN_IO_MAX_FILE_BYTES ((size_t)(sizeof(size_t) > 4 ? 8ULL << 30 : 1ULL << 30))
#endif

/* Under AddressSanitizer the slack around each 64-byte aligned block that kgen_io_alloc
 * hands out is poisoned, so code that reads or writes a byte outside a tensor (or an
 * arena allocated the same way) is caught, not only code that leaves the block. */
#if defined(__SANITIZE_ADDRESS__)
#define KGEN_IO_ASAN_ 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KGEN_IO_ASAN_ 1
#endif
#endif
#ifdef KGEN_IO_ASAN_
#include <sanitizer/asan_interface.h>
#define KGEN_IO_POISON_(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define KGEN_IO_UNPOISON_(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define KGEN_IO_POISON_(p, n) ((void)(p), (void)(n))
#define KGEN_IO_UNPOISON_(p, n) ((void)(p), (void)(n))
#endif

#define KGEN_IO_API KGEN_INLINE

typedef struct {
    void *data;                      /* count elements, row-major, host byte order */
    kgen_dtype dtype;
    int32_t ndim;
    int64_t shape[KGEN_IO_MAX_DIMS];
    size_t count;                    /* number of elements: the product of shape */
    size_t nbytes;                   /* count * element size (packed types: rounded up
                                        to whole bytes) */
    char name[64];                   /* a TensorProto's name (truncated), "" otherwise */
    void *alloc_;                    /* the block that data points into, for free() */
} kgen_io_tensor;

/* ---------------------------------------------------------------- small helpers */

KGEN_IO_API int kgen_io_fail_(char *err, size_t errlen, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

KGEN_IO_API int kgen_io_fail_(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    if (err && errlen) {
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return KGEN_IO_ERR;
}

/* Prefix a message that a parser left in err with the file's path. */
KGEN_IO_API int kgen_io_fail_path_(char *err, size_t errlen, const char *path, const char *msg)
{
    return kgen_io_fail_(err, errlen, "%s: %s", path, msg);
}

KGEN_IO_API int kgen_io_host_is_le_(void)
{
    uint16_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return b == 1;
}

/* Reverse the bytes of each of n elements of `size` bytes (file order <-> host order). */
KGEN_IO_API void kgen_io_swap_(void *data, size_t n, size_t size)
{
    unsigned char *p = (unsigned char *)data, t;
    size_t i, j;
    if (size < 2)
        return;
    for (i = 0; i < n; i++, p += size)
        for (j = 0; j < size / 2; j++) {
            t = p[j];
            p[j] = p[size - 1 - j];
            p[size - 1 - j] = t;
        }
}

/* a * b, or -1 when it does not fit in size_t */
KGEN_IO_API int kgen_io_mul_(size_t a, size_t b, size_t *out)
{
    if (b != 0 && a > (size_t)-1 / b)
        return -1;
    *out = a * b;
    return 0;
}

/* The bits of an element of a packed type (int4, uint4, int2, uint2: 4 or 2; float4_e2m1:
 * 4), 0 for the others. */
KGEN_IO_API int kgen_io_packed_bits(kgen_dtype dt)
{
    if (dt.lanes != 1)
        return 0;
    if (dt.code == KGEN_DTYPE_INT || dt.code == KGEN_DTYPE_UINT)
        return dt.bits == 4 || dt.bits == 2 ? dt.bits : 0;
    return dt.code == KGEN_DTYPE_FLOAT && dt.bits == 4 ? 4 : 0;
}

/* Bytes per element of the dtypes this header handles, 0 for anything else; 1 for the
 * packed types (the byte that holds several). */
KGEN_IO_API size_t kgen_io_dtype_size(kgen_dtype dt)
{
    if (dt.lanes != 1)
        return 0;
    if (kgen_io_packed_bits(dt))
        return 1;
    switch (dt.code) {
    case KGEN_DTYPE_INT:
    case KGEN_DTYPE_UINT:
        return (dt.bits == 8 || dt.bits == 16 || dt.bits == 32 || dt.bits == 64) ? dt.bits / 8u : 0;
    case KGEN_DTYPE_FLOAT:   /* (8 bits: float8_e8m0, an exponent only) */
        return (dt.bits == 8 || dt.bits == 16 || dt.bits == 32 || dt.bits == 64) ? dt.bits / 8u : 0;
    case KGEN_DTYPE_BFLOAT:
        return dt.bits == 16 ? 2 : 0;
    case KGEN_DTYPE_FLOAT8_E4M3FN:
    case KGEN_DTYPE_FLOAT8_E4M3FNUZ:
    case KGEN_DTYPE_FLOAT8_E5M2:
    case KGEN_DTYPE_FLOAT8_E5M2FNUZ:
        return dt.bits == 8 ? 1 : 0;
    case KGEN_DTYPE_BOOL:
        return dt.bits == 8 ? 1 : 0;
    default:
        return 0;
    }
}

/* Bytes of count elements of dt (packed types: rounded up); -1 on overflow. */
KGEN_IO_API int kgen_io_nbytes_(kgen_dtype dt, size_t count, size_t *out)
{
    int bits = kgen_io_packed_bits(dt);
    if (!bits)
        return kgen_io_mul_(count, kgen_io_dtype_size(dt), out);
    *out = count / (8u / (size_t)bits) + (count % (8u / (size_t)bits) != 0);
    return 0;
}

/* Element i of packed data (kgen_io_packed_bits(dt) != 0): its code, sign-extended for
 * int4 and int2. */
KGEN_IO_API long long kgen_io_packed_get(const void *data, size_t i, kgen_dtype dt)
{
    int bits = kgen_io_packed_bits(dt), per = bits ? 8 / bits : 1;
    unsigned v = (unsigned)(((const unsigned char *)data)[i / (size_t)per] >> (int)(i % (size_t)per) * bits) &
                 ((1u << bits) - 1u);
    if (dt.code == KGEN_DTYPE_INT)
        return (long long)(v ^ (1u << (bits - 1))) - (1 << (bits - 1));
    return (long long)v;
}

KGEN_IO_API void kgen_io_packed_set_(void *data, size_t i, kgen_dtype dt, long long code)
{
    int bits = kgen_io_packed_bits(dt), per = 8 / bits, sh = (int)(i % (size_t)per) * bits;
    unsigned mask = (1u << bits) - 1u;
    unsigned char *p = (unsigned char *)data + i / (size_t)per;
    *p = (unsigned char)((*p & ~(mask << sh)) | (((unsigned)code & mask) << sh));
}

/* The value of a float4_e2m1 code (FLOAT, 4 bits: 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their
 * negatives) or a float8_e8m0 one (FLOAT, 8 bits: 2^(code - 127), 255 NaN). */
KGEN_IO_API double kgen_io_lowbit_float(kgen_dtype dt, unsigned code)
{
    static const double f4[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
    if (dt.bits == 4)
        return (code & 8u ? -1 : 1) * f4[code & 7u];
    return code == 255 ? (double)kgen_bits_f32(0x7fc00000u) : ldexp(1.0, (int)code - 127);
}

KGEN_IO_API kgen_dtype kgen_io_dtype(uint8_t code, uint8_t bits)
{
    kgen_dtype dt;
    dt.code = code;
    dt.bits = bits;
    dt.lanes = 1;
    return dt;
}

KGEN_IO_API int kgen_io_dtype_equal(kgen_dtype a, kgen_dtype b)
{
    return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}

/* NumPy's name of a dtype ("float32", "uint8", "bool", ...), "?" when unknown. */
KGEN_IO_API const char *kgen_io_dtype_name(kgen_dtype dt)
{
    static const char *const ints[] = {"int8", "int16", "int32", "int64"};
    static const char *const uints[] = {"uint8", "uint16", "uint32", "uint64"};
    static const char *const floats[] = {"?", "float16", "float32", "float64"};
    int k = dt.bits == 8 ? 0 : dt.bits == 16 ? 1 : dt.bits == 32 ? 2 : dt.bits == 64 ? 3 : -1;
    if (kgen_io_packed_bits(dt))
        return dt.code == KGEN_DTYPE_FLOAT ? "float4_e2m1fn" : dt.code == KGEN_DTYPE_INT ? (dt.bits == 4 ? "int4" : "int2")
                                                                                        : (dt.bits == 4 ? "uint4" : "uint2");
    if (dt.lanes == 1 && dt.code == KGEN_DTYPE_FLOAT && dt.bits == 8)
        return "float8_e8m0fnu";
    if (dt.lanes != 1 || k < 0)
        return "?";
    switch (dt.code) {
    case KGEN_DTYPE_INT: return ints[k];
    case KGEN_DTYPE_UINT: return uints[k];
    case KGEN_DTYPE_FLOAT: return floats[k];
    case KGEN_DTYPE_BFLOAT: return k == 1 ? "bfloat16" : "?";
    case KGEN_DTYPE_FLOAT8_E4M3FN: return k == 0 ? "float8_e4m3fn" : "?";
    case KGEN_DTYPE_FLOAT8_E4M3FNUZ: return k == 0 ? "float8_e4m3fnuz" : "?";
    case KGEN_DTYPE_FLOAT8_E5M2: return k == 0 ? "float8_e5m2" : "?";
    case KGEN_DTYPE_FLOAT8_E5M2FNUZ: return k == 0 ? "float8_e5m2fnuz" : "?";
    case KGEN_DTYPE_BOOL: return k == 0 ? "bool" : "?";
    default: return "?";
    }
}

/* "float32 [3, 4, 5]" ("float32 []" for a scalar) into buf, which it returns, so that a
 * message can hold two of them: printf("%s vs %s", kgen_io_format_type(a, ...), ...). */
KGEN_IO_API const char *kgen_io_format_type(char *buf, size_t n, kgen_dtype dt, int32_t ndim,
                                            const int64_t *shape)
{
    size_t used;
    int32_t i;
    if (!buf || n == 0)
        return "";
    snprintf(buf, n, "%s [", kgen_io_dtype_name(dt));
    for (i = 0; i < ndim; i++) {
        used = strlen(buf);
        snprintf(buf + used, n - used, "%s%lld", i ? ", " : "", (long long)shape[i]);
    }
    used = strlen(buf);
    snprintf(buf + used, n - used, "]");
    return buf;
}

/* ---------------------------------------------------------------- tensors */

KGEN_IO_API void kgen_io_init(kgen_io_tensor *t) { memset(t, 0, sizeof *t); }

KGEN_IO_API void kgen_io_free(kgen_io_tensor *t)
{
    if (!t)
        return;
    if (t->alloc_)
        KGEN_IO_UNPOISON_(t->alloc_, t->nbytes + 64);
    free(t->alloc_);
    kgen_io_init(t);
}

/* Give t a zeroed, 64-byte aligned buffer for dtype and shape (for outputs). */
KGEN_IO_API int kgen_io_alloc(kgen_io_tensor *t, kgen_dtype dt, int32_t ndim, const int64_t *shape,
                              char *err, size_t errlen)
{
    size_t size = kgen_io_dtype_size(dt), count = 1, nbytes;
    int32_t i;
    kgen_io_init(t);
    if (size == 0)
        return kgen_io_fail_(err, errlen, "unsupported dtype (code %d, %d bits, %d lanes)", dt.code,
                             dt.bits, dt.lanes);
    if (ndim < 0 || ndim > KGEN_IO_MAX_DIMS)
        return kgen_io_fail_(err, errlen, "%d dimensions (at most %d)", (int)ndim, KGEN_IO_MAX_DIMS);
    for (i = 0; i < ndim; i++) {
        if (shape[i] < 0 || (uint64_t)shape[i] > (uint64_t)(size_t)-1 ||
            kgen_io_mul_(count, (size_t)shape[i], &count))
            return kgen_io_fail_(err, errlen, "shape too large or negative");
        t->shape[i] = shape[i];
    }
    if (kgen_io_nbytes_(dt, count, &nbytes) || nbytes > (size_t)-1 - 64)
        return kgen_io_fail_(err, errlen, "shape too large");
    t->alloc_ = calloc(nbytes + 64, 1);
    if (!t->alloc_)
        return kgen_io_fail_(err, errlen, "out of memory (%lu bytes)", (unsigned long)nbytes);
    t->data = (unsigned char *)t->alloc_ + (64 - (uintptr_t)t->alloc_ % 64) % 64;
    KGEN_IO_POISON_(t->alloc_, (size_t)((unsigned char *)t->data - (unsigned char *)t->alloc_));
    KGEN_IO_POISON_((unsigned char *)t->data + nbytes,
                    (size_t)((unsigned char *)t->alloc_ + nbytes + 64 - ((unsigned char *)t->data + nbytes)));
    t->dtype = dt;
    t->ndim = ndim;
    t->count = count;
    t->nbytes = nbytes;
    return KGEN_IO_OK;
}

/* A DLTensor over t's memory (compact row-major, CPU). Its shape points into t, so it is
 * valid as long as t is neither freed nor moved. */
KGEN_IO_API kgen_tensor kgen_io_view(kgen_io_tensor *t)
{
    kgen_tensor v;
    memset(&v, 0, sizeof v);
    v.data = t->data;
    v.device.device_type = KGEN_DEVICE_CPU;
    v.ndim = t->ndim;
    v.dtype = t->dtype;
    v.shape = t->shape;
    return v;
}

/* Read a whole file into a malloc'd buffer (NUL-terminated, for convenience). */
KGEN_IO_API unsigned char *kgen_io_slurp(const char *path, size_t *len, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    unsigned char *buf = NULL, *nb;
    size_t cap = 0, n = 0, got;
    if (!f) {
        kgen_io_fail_(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    for (;;) {
        if (n > KGEN_IO_MAX_FILE_BYTES) {
            free(buf);
            fclose(f);
            kgen_io_fail_(err, errlen, "%s: larger than the limit of %lu MiB (KGEN_IO_MAX_FILE_BYTES)", path,
                          (unsigned long)(KGEN_IO_MAX_FILE_BYTES >> 20));
            return NULL;
        }
        if (cap - n < 4096) {
            cap = cap ? cap * 2 : 65536;
            nb = (unsigned char *)realloc(buf, cap + 1);
            if (!nb) {
                free(buf);
                fclose(f);
                kgen_io_fail_(err, errlen, "%s: out of memory", path);
                return NULL;
            }
            buf = nb;
        }
        got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    if (ferror(f)) {
        free(buf);
        fclose(f);
        kgen_io_fail_(err, errlen, "%s: read error", path);
        return NULL;
    }
    fclose(f);
    buf[n] = 0;
    *len = n;
    return buf;
}

/* Fill t (already holding dtype, ndim, shape) with count elements copied from src in
 * little-endian order. */
KGEN_IO_API int kgen_io_fill_le_(kgen_io_tensor *t, const unsigned char *src, char *err, size_t errlen)
{
    kgen_io_tensor shaped = *t;
    if (kgen_io_alloc(t, shaped.dtype, shaped.ndim, shaped.shape, err, errlen))
        return KGEN_IO_ERR;
    memcpy(t->name, shaped.name, sizeof t->name);
    if (t->nbytes)
        memcpy(t->data, src, t->nbytes);
    if (!kgen_io_host_is_le_())
        kgen_io_swap_(t->data, t->count, kgen_io_dtype_size(t->dtype));
    return KGEN_IO_OK;
}

/* ---------------------------------------------------------------- .npy */

/* The header is a Python dict literal such as
 *     {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
 * This is a parser for exactly that grammar (strings, True/False, tuples of integers),
 * working on [p, end) and never past it. */
typedef struct {
    const unsigned char *p, *end;
} kgen_io_cursor_;

KGEN_IO_API void kgen_io_skip_ws_(kgen_io_cursor_ *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

KGEN_IO_API int kgen_io_eat_(kgen_io_cursor_ *c, char ch)
{
    kgen_io_skip_ws_(c);
    if (c->p < c->end && *c->p == (unsigned char)ch) {
        c->p++;
        return 1;
    }
    return 0;
}

/* a quoted string into out (at most n-1 characters, longer is an error) */
KGEN_IO_API int kgen_io_npy_string_(kgen_io_cursor_ *c, char *out, size_t n)
{
    unsigned char q;
    size_t k = 0;
    kgen_io_skip_ws_(c);
    if (c->p >= c->end || (*c->p != '\'' && *c->p != '"'))
        return -1;
    q = *c->p++;
    while (c->p < c->end && *c->p != q) {
        if (k + 1 >= n || *c->p == '\\')
            return -1;
        out[k++] = (char)*c->p++;
    }
    if (c->p >= c->end)
        return -1;
    c->p++;
    out[k] = 0;
    return 0;
}

KGEN_IO_API int kgen_io_npy_word_(kgen_io_cursor_ *c, const char *w)
{
    size_t n = strlen(w);
    kgen_io_skip_ws_(c);
    if ((size_t)(c->end - c->p) >= n && !memcmp(c->p, w, n)) {
        c->p += n;
        return 1;
    }
    return 0;
}

/* '<f4' and friends: byte order, kind, size in bytes */
KGEN_IO_API int kgen_io_npy_descr_(const char *d, kgen_dtype *dt, char *err, size_t errlen)
{
    char order = d[0], kind;
    int size;
    if (order == 0 || d[1] == 0 || d[2] == 0 || (d[3] != 0 && d[4] != 0))
        return kgen_io_fail_(err, errlen, "unsupported dtype '%s'", d);
    kind = d[1];
    if (d[2] < '1' || d[2] > '8' || d[3] != 0)
        return kgen_io_fail_(err, errlen, "unsupported dtype '%s'", d);
    size = d[2] - '0';
    if (order == '>' && size > 1)
        return kgen_io_fail_(err, errlen, "big-endian dtype '%s' is not supported", d);
    if (order != '<' && order != '|' && order != '=' && order != '>')
        return kgen_io_fail_(err, errlen, "unsupported dtype '%s'", d);
    if (order == '=' && !kgen_io_host_is_le_() && size > 1)
        return kgen_io_fail_(err, errlen, "native-order dtype '%s' on a big-endian host", d);
    if (kind == 'f' && (size == 2 || size == 4 || size == 8))
        *dt = kgen_io_dtype(KGEN_DTYPE_FLOAT, (uint8_t)(size * 8));
    else if (kind == 'i' && (size == 1 || size == 2 || size == 4 || size == 8))
        *dt = kgen_io_dtype(KGEN_DTYPE_INT, (uint8_t)(size * 8));
    else if (kind == 'u' && (size == 1 || size == 2 || size == 4 || size == 8))
        *dt = kgen_io_dtype(KGEN_DTYPE_UINT, (uint8_t)(size * 8));
    else if (kind == 'b' && size == 1)
        *dt = kgen_io_dtype(KGEN_DTYPE_BOOL, 8);
    else
        return kgen_io_fail_(err, errlen, "unsupported dtype '%s'", d);
    return KGEN_IO_OK;
}

KGEN_IO_API int kgen_io_npy_shape_(kgen_io_cursor_ *c, kgen_io_tensor *t, char *err, size_t errlen)
{
    int64_t v;
    int any;
    t->ndim = 0;
    if (!kgen_io_eat_(c, '('))
        return kgen_io_fail_(err, errlen, "bad .npy header: 'shape' is not a tuple");
    for (;;) {
        if (kgen_io_eat_(c, ')'))
            return KGEN_IO_OK;
        kgen_io_skip_ws_(c);
        v = 0;
        any = 0;
        while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
            if (v > (INT64_MAX - 9) / 10)
                return kgen_io_fail_(err, errlen, "bad .npy header: dimension too large");
            v = v * 10 + (*c->p++ - '0');
            any = 1;
        }
        if (!any)
            return kgen_io_fail_(err, errlen, "bad .npy header: shape holds a non-integer");
        if (c->p < c->end && *c->p == 'L')  /* Python 2 long */
            c->p++;
        if (t->ndim == KGEN_IO_MAX_DIMS)
            return kgen_io_fail_(err, errlen, "more than %d dimensions", KGEN_IO_MAX_DIMS);
        t->shape[t->ndim++] = v;
        if (!kgen_io_eat_(c, ',')) {
            if (kgen_io_eat_(c, ')'))
                return KGEN_IO_OK;
            return kgen_io_fail_(err, errlen, "bad .npy header: malformed shape tuple");
        }
    }
}

/* Decode a whole .npy file held in buf[0..len). */
KGEN_IO_API int kgen_io_parse_npy(const void *buf, size_t len, kgen_io_tensor *t, char *err, size_t errlen)
{
    const unsigned char *b = (const unsigned char *)buf;
    kgen_io_cursor_ c;
    kgen_io_tensor shaped;
    char key[32], descr[16];
    size_t hstart, hlen, count = 1, nbytes, i;
    int have_descr = 0, have_order = 0, have_shape = 0, fortran = 0;
    kgen_io_init(t);
    kgen_io_init(&shaped);
    if (len < 10)
        return kgen_io_fail_(err, errlen, "truncated .npy header (%lu bytes)", (unsigned long)len);
    if (memcmp(b, "\x93NUMPY", 6) != 0)
        return kgen_io_fail_(err, errlen, "not a .npy file (bad magic)");
    if (b[6] == 1) {
        hstart = 10;
        hlen = (size_t)b[8] | (size_t)b[9] << 8;
    } else if (b[6] == 2 || b[6] == 3) {
        if (len < 12)
            return kgen_io_fail_(err, errlen, "truncated .npy header (%lu bytes)", (unsigned long)len);
        hstart = 12;
        hlen = (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
    } else
        return kgen_io_fail_(err, errlen, "unsupported .npy version %d.%d", b[6], b[7]);
    if (hlen > len - hstart)
        return kgen_io_fail_(err, errlen, "truncated .npy header: it declares %lu bytes, %lu are left",
                             (unsigned long)hlen, (unsigned long)(len - hstart));
    c.p = b + hstart;
    c.end = b + hstart + hlen;
    if (!kgen_io_eat_(&c, '{'))
        return kgen_io_fail_(err, errlen, "bad .npy header: no '{'");
    while (!kgen_io_eat_(&c, '}')) {
        if (kgen_io_npy_string_(&c, key, sizeof key) || !kgen_io_eat_(&c, ':'))
            return kgen_io_fail_(err, errlen, "bad .npy header: expected 'key':");
        if (!strcmp(key, "descr")) {
            kgen_io_skip_ws_(&c);
            if (c.p < c.end && *c.p == '[')
                return kgen_io_fail_(err, errlen, "structured dtypes are not supported");
            if (kgen_io_npy_string_(&c, descr, sizeof descr))
                return kgen_io_fail_(err, errlen, "bad .npy header: 'descr' is not a short string");
            if (kgen_io_npy_descr_(descr, &shaped.dtype, err, errlen))
                return KGEN_IO_ERR;
            have_descr = 1;
        } else if (!strcmp(key, "fortran_order")) {
            if (kgen_io_npy_word_(&c, "True"))
                fortran = 1;
            else if (kgen_io_npy_word_(&c, "False"))
                fortran = 0;
            else
                return kgen_io_fail_(err, errlen, "bad .npy header: 'fortran_order' is not True or False");
            have_order = 1;
        } else if (!strcmp(key, "shape")) {
            if (kgen_io_npy_shape_(&c, &shaped, err, errlen))
                return KGEN_IO_ERR;
            have_shape = 1;
        } else
            return kgen_io_fail_(err, errlen, "bad .npy header: unknown key '%s'", key);
        if (!kgen_io_eat_(&c, ',')) {
            if (kgen_io_eat_(&c, '}'))
                break;
            return kgen_io_fail_(err, errlen, "bad .npy header: expected ',' or '}'");
        }
    }
    kgen_io_skip_ws_(&c);
    if (c.p != c.end)
        return kgen_io_fail_(err, errlen, "bad .npy header: text after the dict");
    if (!have_descr || !have_order || !have_shape)
        return kgen_io_fail_(err, errlen, "bad .npy header: missing '%s'",
                             !have_descr ? "descr" : !have_order ? "fortran_order" : "shape");
    if (fortran)
        return kgen_io_fail_(err, errlen, "fortran_order True is not supported (C order only)");
    for (i = 0; i < (size_t)shaped.ndim; i++)
        if ((uint64_t)shaped.shape[i] > (uint64_t)(size_t)-1 ||
            kgen_io_mul_(count, (size_t)shaped.shape[i], &count))
            return kgen_io_fail_(err, errlen, "shape too large");
    if (kgen_io_mul_(count, kgen_io_dtype_size(shaped.dtype), &nbytes))
        return kgen_io_fail_(err, errlen, "shape too large");
    if (nbytes != len - hstart - hlen) {
        char ty[160];
        return kgen_io_fail_(err, errlen, "data is %lu bytes, but %s needs %lu",
                             (unsigned long)(len - hstart - hlen),
                             kgen_io_format_type(ty, sizeof ty, shaped.dtype, shaped.ndim, shaped.shape),
                             (unsigned long)nbytes);
    }
    *t = shaped;
    return kgen_io_fill_le_(t, b + hstart + hlen, err, errlen);
}

/* The .npy bytes (v1.0 header, then the data in little-endian order) of a tensor, in a
 * malloc'd buffer. The header is padded so that the data starts at a multiple of 64. */
KGEN_IO_API unsigned char *kgen_io_encode_npy(kgen_dtype dt, int32_t ndim, const int64_t *shape,
                                              const void *data, size_t *len, char *err, size_t errlen)
{
    char hdr[1024], descr[8];
    size_t size = kgen_io_dtype_size(dt), count = 1, nbytes, base, pad, hlen, used, k;
    unsigned char *out;
    int32_t i;
    int packed = kgen_io_packed_bits(dt) && dt.code != KGEN_DTYPE_FLOAT;   /* one (u)int8 per element */
    if (size == 0 || (dt.code != KGEN_DTYPE_FLOAT && dt.code != KGEN_DTYPE_INT && dt.code != KGEN_DTYPE_UINT &&
                      dt.code != KGEN_DTYPE_BOOL) || (dt.code == KGEN_DTYPE_FLOAT && dt.bits < 16)) {
        kgen_io_fail_(err, errlen, ".npy cannot hold dtype %s (code %d, %d bits)", kgen_io_dtype_name(dt),
                      dt.code, dt.bits);
        return NULL;
    }
    if (ndim < 0 || ndim > KGEN_IO_MAX_DIMS) {
        kgen_io_fail_(err, errlen, "%d dimensions (at most %d)", (int)ndim, KGEN_IO_MAX_DIMS);
        return NULL;
    }
    for (i = 0; i < ndim; i++)
        if (shape[i] < 0 || (uint64_t)shape[i] > (uint64_t)(size_t)-1 ||
            kgen_io_mul_(count, (size_t)shape[i], &count)) {
            kgen_io_fail_(err, errlen, "shape too large or negative");
            return NULL;
        }
    if (kgen_io_mul_(count, size, &nbytes) || nbytes > (size_t)-1 - sizeof hdr - 64) {
        kgen_io_fail_(err, errlen, "shape too large");
        return NULL;
    }
    snprintf(descr, sizeof descr, "%c%c%d", size == 1 ? '|' : '<',
             dt.code == KGEN_DTYPE_FLOAT ? 'f' : dt.code == KGEN_DTYPE_INT ? 'i' :
             dt.code == KGEN_DTYPE_UINT ? 'u' : 'b', (int)size);
    snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
    for (i = 0; i < ndim; i++) {
        used = strlen(hdr);
        snprintf(hdr + used, sizeof hdr - used, "%s%lld%s", i ? " " : "", (long long)shape[i],
                 ndim == 1 || i + 1 < ndim ? "," : "");
    }
    used = strlen(hdr);
    snprintf(hdr + used, sizeof hdr - used, "), }");
    base = strlen(hdr);
    pad = (64 - (10 + base + 1) % 64) % 64;
    hlen = base + pad + 1;
    out = (unsigned char *)malloc(10 + hlen + nbytes + 1);
    if (!out) {
        kgen_io_fail_(err, errlen, "out of memory");
        return NULL;
    }
    memcpy(out, "\x93NUMPY\x01\x00", 8);
    out[8] = (unsigned char)(hlen & 0xff);
    out[9] = (unsigned char)(hlen >> 8);
    memcpy(out + 10, hdr, base);
    memset(out + 10 + base, ' ', pad);
    out[10 + base + pad] = '\n';
    if (packed)
        for (k = 0; k < count; k++)
            out[10 + hlen + k] = (unsigned char)kgen_io_packed_get(data, k, dt);
    else if (nbytes)
        memcpy(out + 10 + hlen, data, nbytes);
    if (!kgen_io_host_is_le_())
        kgen_io_swap_(out + 10 + hlen, count, size);
    *len = 10 + hlen + nbytes;
    return out;
}

/* An input read from .npy for a model input of packed type want (int4, uint4, int2, uint2):
 * t, an int8 (int4, int2) or uint8 (uint4, uint2) array with one element per value, is
 * replaced by its packed form. Anything else is left as it is (the caller compares the
 * dtypes). A value outside want's range is an error. */
KGEN_IO_API int kgen_io_pack(kgen_io_tensor *t, kgen_dtype want, char *err, size_t errlen)
{
    kgen_io_tensor p;
    int bits = kgen_io_packed_bits(want);
    long long lo, hi, v;
    size_t k;
    if (!bits || want.code == KGEN_DTYPE_FLOAT || t->dtype.bits != 8 || t->dtype.lanes != 1 ||
        t->dtype.code != want.code)
        return KGEN_IO_OK;
    lo = want.code == KGEN_DTYPE_INT ? -(1LL << (bits - 1)) : 0;
    hi = want.code == KGEN_DTYPE_INT ? (1LL << (bits - 1)) - 1 : (1LL << bits) - 1;
    if (kgen_io_alloc(&p, want, t->ndim, t->shape, err, errlen))
        return KGEN_IO_ERR;
    for (k = 0; k < t->count; k++) {
        v = want.code == KGEN_DTYPE_INT ? (long long)((const int8_t *)t->data)[k]
                                        : (long long)((const uint8_t *)t->data)[k];
        if (v < lo || v > hi) {
            kgen_io_free(&p);
            return kgen_io_fail_(err, errlen, "element %lu is %lld, outside %s's range %lld..%lld", (unsigned long)k,
                                 v, kgen_io_dtype_name(want), lo, hi);
        }
        kgen_io_packed_set_(p.data, k, want, v);
    }
    memcpy(p.name, t->name, sizeof p.name);
    kgen_io_free(t);
    *t = p;
    return KGEN_IO_OK;
}

KGEN_IO_API int kgen_io_write_npy(const char *path, kgen_dtype dt, int32_t ndim, const int64_t *shape,
                                  const void *data, char *err, size_t errlen)
{
    char msg[256];
    size_t len = 0;
    unsigned char *bytes = kgen_io_encode_npy(dt, ndim, shape, data, &len, msg, sizeof msg);
    FILE *f;
    int bad;
    if (!bytes)
        return kgen_io_fail_path_(err, errlen, path, msg);
    f = fopen(path, "wb");
    if (!f) {
        free(bytes);
        return kgen_io_fail_(err, errlen, "%s: cannot create: %s", path, strerror(errno));
    }
    bad = fwrite(bytes, 1, len, f) != len;
    bad |= fclose(f) != 0;
    free(bytes);
    if (bad)
        return kgen_io_fail_(err, errlen, "%s: write error", path);
    return KGEN_IO_OK;
}

KGEN_IO_API int kgen_io_read_npy(const char *path, kgen_io_tensor *t, char *err, size_t errlen)
{
    char msg[256];
    size_t len = 0;
    unsigned char *buf;
    int rc;
    kgen_io_init(t);
    buf = kgen_io_slurp(path, &len, err, errlen);
    if (!buf)
        return KGEN_IO_ERR;
    rc = kgen_io_parse_npy(buf, len, t, msg, sizeof msg);
    free(buf);
    return rc ? kgen_io_fail_path_(err, errlen, path, msg) : KGEN_IO_OK;
}

/* ---------------------------------------------------------------- ONNX TensorProto (.pb) */

/* Protocol buffers wire format: a message is a sequence of (key, value) with
 * key = field_number << 3 | wire_type; wire types 0 varint, 1 fixed64, 2 length-delimited,
 * 5 fixed32. A repeated scalar field arrives either once per value (its own wire type) or
 * "packed": one or more length-delimited chunks of concatenated values. */
#define KGEN_IO_PB_VARINT 0
#define KGEN_IO_PB_FIXED64 1
#define KGEN_IO_PB_BYTES 2
#define KGEN_IO_PB_FIXED32 5

KGEN_IO_API int kgen_io_pb_varint_(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
    uint64_t r = 0;
    int shift = 0;
    unsigned b;
    while (*p < end) {
        b = *(*p)++;
        if (shift == 63 && (b & 0x7eu))
            return -1;                      /* more than 64 bits */
        r |= (uint64_t)(b & 0x7fu) << shift;
        if (!(b & 0x80u)) {
            *v = r;
            return 0;
        }
        shift += 7;
        if (shift > 63)
            return -1;
    }
    return -1;                              /* truncated */
}

KGEN_IO_API uint64_t kgen_io_le_(const unsigned char *p, int n)
{
    uint64_t v = 0;
    int i;
    for (i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* One field at *p: its number, wire type and value (scalar in *val, bytes in *data,
 * *dlen). Returns 0, or -1 with a message. */
KGEN_IO_API int kgen_io_pb_field_(const unsigned char **p, const unsigned char *end, uint32_t *field,
                                  int *wire, uint64_t *val, const unsigned char **data, size_t *dlen,
                                  char *err, size_t errlen)
{
    uint64_t key, n;
    if (kgen_io_pb_varint_(p, end, &key))
        return kgen_io_fail_(err, errlen, "malformed protobuf: bad field key");
    if ((key >> 3) == 0 || (key >> 3) > 0x1fffffffu)
        return kgen_io_fail_(err, errlen, "malformed protobuf: field number %llu", (unsigned long long)(key >> 3));
    *field = (uint32_t)(key >> 3);
    *wire = (int)(key & 7u);
    switch (*wire) {
    case KGEN_IO_PB_VARINT:
        if (kgen_io_pb_varint_(p, end, val))
            return kgen_io_fail_(err, errlen, "malformed protobuf: bad varint in field %u", (unsigned)*field);
        return 0;
    case KGEN_IO_PB_FIXED64:
        if (end - *p < 8)
            return kgen_io_fail_(err, errlen, "malformed protobuf: truncated field %u", (unsigned)*field);
        *val = kgen_io_le_(*p, 8);
        *p += 8;
        return 0;
    case KGEN_IO_PB_FIXED32:
        if (end - *p < 4)
            return kgen_io_fail_(err, errlen, "malformed protobuf: truncated field %u", (unsigned)*field);
        *val = kgen_io_le_(*p, 4);
        *p += 4;
        return 0;
    case KGEN_IO_PB_BYTES:
        if (kgen_io_pb_varint_(p, end, &n) || n > (uint64_t)(end - *p))
            return kgen_io_fail_(err, errlen, "malformed protobuf: field %u runs past the end",
                                 (unsigned)*field);
        *data = *p;
        *dlen = (size_t)n;
        *p += n;
        return 0;
    default:
        return kgen_io_fail_(err, errlen, "malformed protobuf: wire type %d in field %u", *wire,
                             (unsigned)*field);
    }
}

/* Store the low `size` bytes of v as element i of dst, in host order. */
KGEN_IO_API void kgen_io_store_(void *dst, size_t i, size_t size, uint64_t v)
{
    unsigned char *p = (unsigned char *)dst + i * size;
    uint8_t u8;
    uint16_t u16;
    uint32_t u32;
    switch (size) {
    case 1: u8 = (uint8_t)v; memcpy(p, &u8, 1); break;
    case 2: u16 = (uint16_t)v; memcpy(p, &u16, 2); break;
    case 4: u32 = (uint32_t)v; memcpy(p, &u32, 4); break;
    default: memcpy(p, &v, 8); break;
    }
}

/* Every value of the repeated scalar field `want` of the message [p, end), whose values
 * have wire type `kind` (varint, fixed32 or fixed64), packed or not. Counts them in *n;
 * when dst is given, also stores the first `cap` of them as `size`-byte elements. */
KGEN_IO_API int kgen_io_pb_repeated_(const unsigned char *p, const unsigned char *end, uint32_t want, int kind,
                                     const char *fname, void *dst, size_t size, size_t cap, size_t *n,
                                     char *err, size_t errlen)
{
    uint32_t field = 0;   /* (set by kgen_io_pb_field_; gcc -O3 cannot tell) */
    int wire = 0;
    uint64_t v = 0;
    const unsigned char *data = NULL, *q, *qend;
    size_t dlen = 0, step;
    *n = 0;
    while (p < end) {
        if (kgen_io_pb_field_(&p, end, &field, &wire, &v, &data, &dlen, err, errlen))
            return KGEN_IO_ERR;
        if (field != want)
            continue;
        if (wire == kind) {
            if (dst && *n < cap)
                kgen_io_store_(dst, *n, size, v);
            (*n)++;
        } else if (wire == KGEN_IO_PB_BYTES) {
            q = data;
            qend = data + dlen;
            step = kind == KGEN_IO_PB_FIXED32 ? 4 : 8;
            if (kind != KGEN_IO_PB_VARINT && dlen % step)
                return kgen_io_fail_(err, errlen, "malformed protobuf: packed %s is %lu bytes", fname,
                                     (unsigned long)dlen);
            while (q < qend) {
                if (kind == KGEN_IO_PB_VARINT) {
                    if (kgen_io_pb_varint_(&q, qend, &v))
                        return kgen_io_fail_(err, errlen, "malformed protobuf: bad varint in %s", fname);
                } else {
                    v = kgen_io_le_(q, (int)step);
                    q += step;
                }
                if (dst && *n < cap)
                    kgen_io_store_(dst, *n, size, v);
                (*n)++;
            }
        } else
            return kgen_io_fail_(err, errlen, "malformed protobuf: %s has wire type %d", fname, wire);
    }
    return KGEN_IO_OK;
}

/* ONNX TensorProto.DataType values and their names, for the messages. */
KGEN_IO_API const char *kgen_io_onnx_type_name(int64_t t)
{
    static const char *const names[] = {
        "UNDEFINED", "FLOAT", "UINT8", "INT8", "UINT16", "INT16", "INT32", "INT64", "STRING",
        "BOOL", "FLOAT16", "DOUBLE", "UINT32", "UINT64", "COMPLEX64", "COMPLEX128", "BFLOAT16",
        "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ", "UINT4", "INT4",
        "FLOAT4E2M1", "FLOAT8E8M0", "UINT2", "INT2"};
    return t >= 0 && t < (int64_t)(sizeof names / sizeof names[0]) ? names[t] : "unknown";
}

/* Decode a serialized onnx.TensorProto held in buf[0..len). */
KGEN_IO_API int kgen_io_parse_pb(const void *buf, size_t len, kgen_io_tensor *t, char *err, size_t errlen)
{
    static const unsigned char nothing = 0;
    const unsigned char *b = buf ? (const unsigned char *)buf : &nothing, *p = b, *end = b + (buf ? len : 0);
    const unsigned char *raw = NULL, *data = NULL;
    size_t rawlen = 0, dlen = 0, ndims = 0, count = 1, nbytes, nvals, nwant, i;
    uint64_t v = 0, dims[KGEN_IO_MAX_DIMS];   /* (v, field, wire: set by kgen_io_pb_field_) */
    int64_t data_type = 0;
    uint32_t field = 0, vfield = 0;
    int wire = 0, has_raw = 0, vkind = 0, located = 0;
    const char *vname = "";
    kgen_io_tensor shaped;
    kgen_io_init(t);
    kgen_io_init(&shaped);
    /* pass 1: the scalar fields, and every field's framing */
    while (p < end) {
        if (kgen_io_pb_field_(&p, end, &field, &wire, &v, &data, &dlen, err, errlen))
            return KGEN_IO_ERR;
        switch (field) {
        case 2:
            if (wire != KGEN_IO_PB_VARINT)
                return kgen_io_fail_(err, errlen, "malformed TensorProto: data_type has wire type %d", wire);
            data_type = (int64_t)v;
            break;
        case 3:
            return kgen_io_fail_(err, errlen, "segmented TensorProto is not supported");
        case 8:
            if (wire == KGEN_IO_PB_BYTES) {
                size_t k = dlen < sizeof shaped.name - 1 ? dlen : sizeof shaped.name - 1;
                memcpy(shaped.name, data, k);
                shaped.name[k] = 0;
            }
            break;
        case 9:
            if (wire != KGEN_IO_PB_BYTES)
                return kgen_io_fail_(err, errlen, "malformed TensorProto: raw_data has wire type %d", wire);
            raw = data;
            rawlen = dlen;
            has_raw = 1;
            break;
        case 14:
            if (wire == KGEN_IO_PB_VARINT && v == 1)
                located = 1;
            break;
        default:
            break;
        }
    }
    if (located)
        return kgen_io_fail_(err, errlen, "TensorProto with external data is not supported");
    /* dims */
    if (kgen_io_pb_repeated_(b, end, 1, KGEN_IO_PB_VARINT, "dims", NULL, 0, 0, &ndims, err, errlen))
        return KGEN_IO_ERR;
    if (ndims > KGEN_IO_MAX_DIMS)
        return kgen_io_fail_(err, errlen, "TensorProto has %lu dims (at most %d)", (unsigned long)ndims,
                             KGEN_IO_MAX_DIMS);
    if (kgen_io_pb_repeated_(b, end, 1, KGEN_IO_PB_VARINT, "dims", dims, 8, KGEN_IO_MAX_DIMS, &ndims, err,
                             errlen))
        return KGEN_IO_ERR;
    shaped.ndim = (int32_t)ndims;
    for (i = 0; i < ndims; i++) {
        if ((int64_t)dims[i] < 0)
            return kgen_io_fail_(err, errlen, "TensorProto has a negative dim (%lld)", (long long)(int64_t)dims[i]);
        if (dims[i] > (uint64_t)(size_t)-1 || kgen_io_mul_(count, (size_t)dims[i], &count))
            return kgen_io_fail_(err, errlen, "TensorProto shape too large");
        shaped.shape[i] = (int64_t)dims[i];
    }
    /* the element type, and where its values go when there is no raw_data */
    switch (data_type) {
    case 1: shaped.dtype = kgen_io_dtype(KGEN_DTYPE_FLOAT, 32); vfield = 4; vkind = KGEN_IO_PB_FIXED32; vname = "float_data"; break;
    case 2: shaped.dtype = kgen_io_dtype(KGEN_DTYPE_UINT, 8); break;
    case 3: shaped.dtype = kgen_io_dtype(KGEN_DTYPE_INT, 8); break;
    case 4: shaped.dtype = kgen_io_dtype(KGEN_DTYPE_UINT, 16); break;
    case 5: shaped.dtype = kgen_io_dtype(KGEN_DTYPE_INT, 16); break;
    case 6: shaped.dtype = kgen_io_dtype(KGEN_DTYPE_INT, 32); break;
    case 7: shaped.dtype = kgen_io_dtype(KGEN_DTYPE_INT, 64); vfield = 7; vname = "int64_data"; break;
    case 9: shaped.dtype = kgen_io_dtype(KGEN_DTYPE_BOOL, 8); break;
    case 10: shaped.dtype = kgen_io_dtype(KGEN_DTYPE_FLOAT, 16); break;
    case 11: shaped.dtype = kgen_io_dtype(KGEN_DTYPE_FLOAT, 64); vfield = 10; vkind = KGEN_IO_PB_FIXED64; vname = "double_data"; break;
    case 12: shaped.dtype = kgen_io_dtype(KGEN_DTYPE_UINT, 32); vfield = 11; vname = "uint64_data"; break;
    case 13: shaped.dtype = kgen_io_dtype(KGEN_DTYPE_UINT, 64); vfield = 11; vname = "uint64_data"; break;
    case 16: shaped.dtype = kgen_io_dtype(KGEN_DTYPE_BFLOAT, 16); break;
    case 17: shaped.dtype = kgen_io_dtype(KGEN_DTYPE_FLOAT8_E4M3FN, 8); break;
    case 18: shaped.dtype = kgen_io_dtype(KGEN_DTYPE_FLOAT8_E4M3FNUZ, 8); break;
    case 19: shaped.dtype = kgen_io_dtype(KGEN_DTYPE_FLOAT8_E5M2, 8); break;
    case 20: shaped.dtype = kgen_io_dtype(KGEN_DTYPE_FLOAT8_E5M2FNUZ, 8); break;
    case 21: shaped.dtype = kgen_io_dtype(KGEN_DTYPE_UINT, 4); break;
    case 22: shaped.dtype = kgen_io_dtype(KGEN_DTYPE_INT, 4); break;
    case 23: shaped.dtype = kgen_io_dtype(KGEN_DTYPE_FLOAT, 4); break;
    case 24: shaped.dtype = kgen_io_dtype(KGEN_DTYPE_FLOAT, 8); break;
    case 25: shaped.dtype = kgen_io_dtype(KGEN_DTYPE_UINT, 2); break;
    case 26: shaped.dtype = kgen_io_dtype(KGEN_DTYPE_INT, 2); break;
    case 0:
        return kgen_io_fail_(err, errlen, "TensorProto has no data_type");
    default:
        return kgen_io_fail_(err, errlen, "TensorProto data_type %lld (%s) is not supported", (long long)data_type,
                             kgen_io_onnx_type_name(data_type));
    }
    if (vfield == 0) {                      /* the small types travel in int32_data */
        vfield = 5;
        vname = "int32_data";
    }
    if (kgen_io_nbytes_(shaped.dtype, count, &nbytes))
        return kgen_io_fail_(err, errlen, "TensorProto shape too large");
    /* int32_data holds one value per element, but one packed byte per entry for the
     * packed types */
    nwant = kgen_io_packed_bits(shaped.dtype) ? nbytes : count;
    if (has_raw) {
        if (rawlen != nbytes) {
            char ty[160];
            return kgen_io_fail_(err, errlen, "raw_data is %lu bytes, but %s needs %lu", (unsigned long)rawlen,
                                 kgen_io_format_type(ty, sizeof ty, shaped.dtype, shaped.ndim, shaped.shape),
                                 (unsigned long)nbytes);
        }
        *t = shaped;
        return kgen_io_fill_le_(t, raw, err, errlen);
    }
    if (kgen_io_pb_repeated_(b, end, vfield, vkind, vname, NULL, 0, 0, &nvals, err, errlen))
        return KGEN_IO_ERR;
    if (nvals != nwant) {
        char ty[160];
        return kgen_io_fail_(err, errlen, "%s has %lu values, but %s needs %lu", vname, (unsigned long)nvals,
                             kgen_io_format_type(ty, sizeof ty, shaped.dtype, shaped.ndim, shaped.shape),
                             (unsigned long)nwant);
    }
    if (kgen_io_alloc(t, shaped.dtype, shaped.ndim, shaped.shape, err, errlen))
        return KGEN_IO_ERR;
    memcpy(t->name, shaped.name, sizeof t->name);
    if (kgen_io_pb_repeated_(b, end, vfield, vkind, vname, t->data, kgen_io_dtype_size(t->dtype), nwant, &nvals,
                             err, errlen)) {
        kgen_io_free(t);
        return KGEN_IO_ERR;
    }
    return KGEN_IO_OK;
}

KGEN_IO_API int kgen_io_read_pb(const char *path, kgen_io_tensor *t, char *err, size_t errlen)
{
    char msg[256];
    size_t len = 0;
    unsigned char *buf;
    int rc;
    kgen_io_init(t);
    buf = kgen_io_slurp(path, &len, err, errlen);
    if (!buf)
        return KGEN_IO_ERR;
    rc = kgen_io_parse_pb(buf, len, t, msg, sizeof msg);
    free(buf);
    return rc ? kgen_io_fail_path_(err, errlen, path, msg) : KGEN_IO_OK;
}

/* By extension: .npy, or .pb (an ONNX TensorProto). */
KGEN_IO_API int kgen_io_read(const char *path, kgen_io_tensor *t, char *err, size_t errlen)
{
    size_t n = strlen(path);
    kgen_io_init(t);
    if (n >= 4 && !strcmp(path + n - 4, ".npy"))
        return kgen_io_read_npy(path, t, err, errlen);
    if (n >= 3 && !strcmp(path + n - 3, ".pb"))
        return kgen_io_read_pb(path, t, err, errlen);
    return kgen_io_fail_(err, errlen, "%s: unknown file type (expected .npy or .pb)", path);
}

#endif /* KGEN_IO_H */
