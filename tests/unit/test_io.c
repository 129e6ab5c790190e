/* test_io.c - templates/kgen_io.h, the runners' tensor I/O:
 *
 *   test_io [ONNX_NODE_TESTS_DIR]   (tests/data/onnx-node-tests, from the repository root)
 *
 * .npy round trips of every dtype (in memory and through files), files written by NumPy
 * (format versions 1.0, 2.0, 3.0) read back and matched byte for byte by the writer, an
 * error corpus of malformed .npy headers and TensorProto buffers where each case must fail
 * with its message, hand-made TensorProtos (packed and unpacked fields, every typed data
 * field), truncated and mutated buffers that must fail or load without a crash, and the
 * .pb files of the ONNX node tests: a few values compared with onnx.numpy_helper, then
 * every file checked against the dtypes of MANIFEST.tsv. Without the node-test folder
 * those last checks are skipped. */
#define _POSIX_C_SOURCE 200809L
#include "../../templates/kgen_io.h"
#include "test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char err[512];
static char tmpdir[512];

/* ---------------------------------------------------------------- .npy */

static const struct {
    const char *descr, *name;
    uint8_t code, bits;
} dtypes[] = {
    {"<f2", "float16", KGEN_DTYPE_FLOAT, 16}, {"<f4", "float32", KGEN_DTYPE_FLOAT, 32},
    {"<f8", "float64", KGEN_DTYPE_FLOAT, 64}, {"|i1", "int8", KGEN_DTYPE_INT, 8},
    {"<i2", "int16", KGEN_DTYPE_INT, 16},     {"<i4", "int32", KGEN_DTYPE_INT, 32},
    {"<i8", "int64", KGEN_DTYPE_INT, 64},     {"|u1", "uint8", KGEN_DTYPE_UINT, 8},
    {"<u2", "uint16", KGEN_DTYPE_UINT, 16},   {"<u4", "uint32", KGEN_DTYPE_UINT, 32},
    {"<u8", "uint64", KGEN_DTYPE_UINT, 64},   {"|b1", "bool", KGEN_DTYPE_BOOL, 8},
};
#define NDTYPES (int)(sizeof dtypes / sizeof dtypes[0])

/* np.lib.format.write_array(version=(1, 0)) of np.arange(6, dtype="<i2").reshape(2, 3) - 2 */
static const char npy_v1[140 + 1] =
    "\x93" "NUMPY\x01" "\x00" "v\x00"
    "{'descr': '<i2', 'fortran_order': False, 'shape': (2, 3), }                                                          \x0a"
    "\xfe" "\xff" "\xff" "\xff" "\x00" "\x00" "\x01" "\x00" "\x02" "\x00" "\x03" "\x00";
/* np.lib.format.write_array(version=(2, 0)) of the same */
static const char npy_v2[140 + 1] =
    "\x93" "NUMPY\x02" "\x00" "t\x00" "\x00" "\x00"
    "{'descr': '<i2', 'fortran_order': False, 'shape': (2, 3), }                                                        \x0a"
    "\xfe" "\xff" "\xff" "\xff" "\x00" "\x00" "\x01" "\x00" "\x02" "\x00" "\x03" "\x00";
/* np.lib.format.write_array(version=(3, 0)) of np.array([1.5, -2.0]) */
static const char npy_v3[144 + 1] =
    "\x93" "NUMPY\x03" "\x00" "t\x00" "\x00" "\x00"
    "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }                                                          \x0a"
    "\x00" "\x00" "\x00" "\x00" "\x00" "\x00" "\xf8" "\x3f" "\x00" "\x00" "\x00" "\x00" "\x00"
    "\x00" "\x00" "\xc0";

static int16_t i16_at(const kgen_io_tensor *t, size_t i)
{
    int16_t v;
    memcpy(&v, (const char *)t->data + 2 * i, 2);
    return v;
}

static double f64_at(const kgen_io_tensor *t, size_t i)
{
    double v;
    memcpy(&v, (const char *)t->data + 8 * i, 8);
    return v;
}

static float f32_at(const kgen_io_tensor *t, size_t i)
{
    float v;
    memcpy(&v, (const char *)t->data + 4 * i, 4);
    return v;
}

static int64_t int_at(const kgen_io_tensor *t, size_t i)
{
    const char *p = (const char *)t->data + i * kgen_io_dtype_size(t->dtype);
    int8_t a; int16_t b; int32_t c; int64_t d;
    uint8_t ua; uint16_t ub; uint32_t uc; uint64_t ud;
    int sign = t->dtype.code == KGEN_DTYPE_INT;
    switch (t->dtype.bits) {
    case 8: if (sign) { memcpy(&a, p, 1); return a; } memcpy(&ua, p, 1); return ua;
    case 16: if (sign) { memcpy(&b, p, 2); return b; } memcpy(&ub, p, 2); return ub;
    case 32: if (sign) { memcpy(&c, p, 4); return c; } memcpy(&uc, p, 4); return uc;
    default: if (sign) { memcpy(&d, p, 8); return d; } memcpy(&ud, p, 8); return (int64_t)ud;
    }
}

static int aligned64(const void *p) { return (uintptr_t)p % 64 == 0; }

static void fill_pattern(unsigned char *p, size_t n, int is_bool, int seed)
{
    size_t i;
    for (i = 0; i < n; i++)
        p[i] = is_bool ? (unsigned char)((i * 7 + (size_t)seed) % 3 == 0)
                       : (unsigned char)((i * 37 + (size_t)seed * 11 + 5) & 0xff);
}

static void test_npy_roundtrip(void)
{
    static const int64_t shapes[][4] = {{0}, {7}, {2, 3, 4}, {0, 5}, {1, 1, 3, 2}};
    static const int ranks[] = {0, 1, 3, 2, 4};
    unsigned char data[1024];
    char path[600];
    int d, s, k;
    for (d = 0; d < NDTYPES; d++) {
        kgen_dtype dt = kgen_io_dtype(dtypes[d].code, dtypes[d].bits);
        size_t size = dtypes[d].bits / 8u;
        CHECK_EQ(size, kgen_io_dtype_size(dt));
        CHECK_STR(dtypes[d].name, kgen_io_dtype_name(dt));
        for (s = 0; s < (int)(sizeof ranks / sizeof ranks[0]); s++) {
            size_t count = 1, len = 0;
            kgen_io_tensor t;
            unsigned char *bytes;
            for (k = 0; k < ranks[s]; k++)
                count *= (size_t)shapes[s][k];
            fill_pattern(data, count * size, dt.code == KGEN_DTYPE_BOOL, d + s);
            bytes = kgen_io_encode_npy(dt, ranks[s], shapes[s], data, &len, err, sizeof err);
            CHECK(bytes != NULL);
            if (!bytes) {
                fprintf(stderr, "  %s: %s\n", dtypes[d].descr, err);
                continue;
            }
            CHECK_EQ(0, (len - count * size) % 64);            /* data starts on a 64-byte line */
            CHECK(strstr((const char *)bytes + 10, dtypes[d].descr) != NULL);
            CHECK_EQ(KGEN_IO_OK, kgen_io_parse_npy(bytes, len, &t, err, sizeof err));
            CHECK(kgen_io_dtype_equal(dt, t.dtype));
            CHECK_EQ(ranks[s], t.ndim);
            for (k = 0; k < ranks[s]; k++)
                CHECK_EQ(shapes[s][k], t.shape[k]);
            CHECK_EQ(count, t.count);
            CHECK_EQ(count * size, t.nbytes);
            CHECK(t.data != NULL && aligned64(t.data));
            CHECK(t.data && memcmp(t.data, data, count * size) == 0);
            kgen_io_free(&t);
            CHECK(t.data == NULL && t.alloc_ == NULL);
            free(bytes);
        }
        /* through a file, by the extension dispatch too */
        {
            static const int64_t shape[2] = {2, 3};
            kgen_io_tensor t;
            snprintf(path, sizeof path, "%s/%s.npy", tmpdir, dtypes[d].name);
            fill_pattern(data, 6 * size, dt.code == KGEN_DTYPE_BOOL, d);
            CHECK_EQ(KGEN_IO_OK, kgen_io_write_npy(path, dt, 2, shape, data, err, sizeof err));
            CHECK_EQ(KGEN_IO_OK, kgen_io_read(path, &t, err, sizeof err));
            CHECK(kgen_io_dtype_equal(dt, t.dtype) && t.ndim == 2 && t.shape[0] == 2 && t.shape[1] == 3);
            CHECK(t.data && memcmp(t.data, data, 6 * size) == 0);
            kgen_io_free(&t);
        }
    }
}

static void test_npy_numpy_files(void)
{
    static const int64_t shape[2] = {2, 3};
    static const int16_t vals[6] = {-2, -1, 0, 1, 2, 3};
    kgen_io_tensor t;
    unsigned char *bytes;
    size_t len = 0;
    int i;
    /* the writer makes what NumPy makes, byte for byte */
    bytes = kgen_io_encode_npy(kgen_io_dtype(KGEN_DTYPE_INT, 16), 2, shape, vals, &len, err, sizeof err);
    CHECK_EQ(sizeof npy_v1 - 1, len);
    CHECK(bytes && len == sizeof npy_v1 - 1 && memcmp(bytes, npy_v1, len) == 0);
    free(bytes);

    CHECK_EQ(KGEN_IO_OK, kgen_io_parse_npy(npy_v1, sizeof npy_v1 - 1, &t, err, sizeof err));
    CHECK_STR("int16 [2, 3]", kgen_io_format_type(err, sizeof err, t.dtype, t.ndim, t.shape));
    for (i = 0; i < 6; i++)
        CHECK_EQ(vals[i], i16_at(&t, (size_t)i));
    kgen_io_free(&t);

    CHECK_EQ(KGEN_IO_OK, kgen_io_parse_npy(npy_v2, sizeof npy_v2 - 1, &t, err, sizeof err));
    CHECK_STR("int16 [2, 3]", kgen_io_format_type(err, sizeof err, t.dtype, t.ndim, t.shape));
    for (i = 0; i < 6; i++)
        CHECK_EQ(vals[i], i16_at(&t, (size_t)i));
    kgen_io_free(&t);

    CHECK_EQ(KGEN_IO_OK, kgen_io_parse_npy(npy_v3, sizeof npy_v3 - 1, &t, err, sizeof err));
    CHECK_STR("float64 [2]", kgen_io_format_type(err, sizeof err, t.dtype, t.ndim, t.shape));
    CHECK(t.count == 2 && f64_at(&t, 0) == 1.5 && f64_at(&t, 1) == -2.0);
    kgen_io_free(&t);
}

/* a .npy buffer with the given version and header text, then datalen bytes of zeros */
static unsigned char *make_npy(int major, const char *header, size_t datalen, size_t *len)
{
    size_t h = strlen(header), pre = major == 1 ? 10 : 12;
    unsigned char *b = (unsigned char *)calloc(pre + h + datalen + 1, 1);
    memcpy(b, "\x93NUMPY", 6);
    b[6] = (unsigned char)major;
    b[8] = (unsigned char)(h & 0xff);
    b[9] = (unsigned char)(h >> 8);
    memcpy(b + pre, header, h);
    *len = pre + h + datalen;
    return b;
}

static void npy_ok(int line, int major, const char *header, size_t datalen, const char *type)
{
    size_t len;
    unsigned char *b = make_npy(major, header, datalen, &len);
    kgen_io_tensor t;
    char ty[200];
    int rc = kgen_io_parse_npy(b, len, &t, err, sizeof err);
    if (rc != KGEN_IO_OK)
        fprintf(stderr, "test_io.c:%d: %s\n", line, err);
    CHECK_EQ(KGEN_IO_OK, rc);
    if (rc == KGEN_IO_OK)
        CHECK_STR(type, kgen_io_format_type(ty, sizeof ty, t.dtype, t.ndim, t.shape));
    kgen_io_free(&t);
    free(b);
}

static void npy_fails(int line, int major, const char *header, size_t datalen, const char *msg)
{
    size_t len;
    unsigned char *b = make_npy(major, header, datalen, &len);
    kgen_io_tensor t;
    int rc = kgen_io_parse_npy(b, len, &t, err, sizeof err);
    if (rc != KGEN_IO_ERR || !strstr(err, msg))
        fprintf(stderr, "test_io.c:%d: header %s\n", line, header);
    CHECK_EQ(KGEN_IO_ERR, rc);
    CHECK_HAS(err, msg);
    CHECK(t.data == NULL);
    kgen_io_free(&t);
    free(b);
}

#define NPY_OK(major, header, datalen, type) npy_ok(__LINE__, major, header, datalen, type)
#define NPY_FAILS(major, header, datalen, msg) npy_fails(__LINE__, major, header, datalen, msg)

static void test_npy_headers(void)
{
    kgen_io_tensor t;
    unsigned char buf[64];
    /* what NumPy writes and reads that a hand-written header may also use */
    NPY_OK(1, "{'descr':'<f4','fortran_order':False,'shape':(2,3)}", 24, "float32 [2, 3]");
    NPY_OK(1, "{\"shape\": (3,), \"descr\": \"<i1\", \"fortran_order\": False}\n", 3, "int8 [3]");
    NPY_OK(1, "{'descr': '|i1', 'fortran_order': False, 'shape': (2L, 2L), }  \n", 4, "int8 [2, 2]");
    NPY_OK(1, "{'descr': '=u2', 'fortran_order': False, 'shape': (), }", 2, "uint16 []");
    NPY_OK(1, "{'descr': '<f2', 'fortran_order': False, 'shape': (0, 1000000000000), }", 0,
           "float16 [0, 1000000000000]");
    NPY_OK(3, "{'descr': '|b1', 'fortran_order': False, 'shape': ( 4 , ) , }", 4, "bool [4]");

    NPY_FAILS(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", 24, "fortran_order True");
    NPY_FAILS(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 20,
              "data is 20 bytes, but float32 [2, 3] needs 24");
    NPY_FAILS(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 28, "data is 28 bytes");
    NPY_FAILS(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }", 0, "data is 0 bytes");
    NPY_FAILS(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904, 4611686018427387904), }",
              8, "shape too large");
    NPY_FAILS(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2305843009213693952,), }", 8,
              "shape too large");
    NPY_FAILS(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000000,), }", 0, "data is 0 bytes");
    NPY_FAILS(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }", 0,
              "dimension too large");
    NPY_FAILS(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }", 0, "non-integer");
    NPY_FAILS(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2 3), }", 24, "malformed shape tuple");
    NPY_FAILS(1, "{'descr': '<f4', 'fortran_order': False, 'shape': [2, 3], }", 24, "'shape' is not a tuple");
    NPY_FAILS(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1), }", 4,
              "more than 16 dimensions");
    NPY_FAILS(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", 4, "big-endian");
    NPY_FAILS(1, "{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", 8, "unsupported dtype '<c8'");
    NPY_FAILS(1, "{'descr': '<f3', 'fortran_order': False, 'shape': (1,), }", 3, "unsupported dtype '<f3'");
    NPY_FAILS(1, "{'descr': '<U10', 'fortran_order': False, 'shape': (1,), }", 40, "unsupported dtype '<U10'");
    NPY_FAILS(1, "{'descr': 'O', 'fortran_order': False, 'shape': (1,), }", 8, "unsupported dtype 'O'");
    NPY_FAILS(1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", 4, "structured");
    NPY_FAILS(1, "{'descr': '<f4', 'fortran_order': False, }", 4, "missing 'shape'");
    NPY_FAILS(1, "{'fortran_order': False, 'shape': (1,), }", 4, "missing 'descr'");
    NPY_FAILS(1, "{'descr': '<f4', 'shape': (1,), }", 4, "missing 'fortran_order'");
    NPY_FAILS(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'foo': 1}", 4, "unknown key 'foo'");
    NPY_FAILS(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), } x", 4, "text after the dict");
    NPY_FAILS(1, "{'descr': '<f4, 'fortran_order': False, 'shape': (1,), }", 4, "unsupported dtype '<f4, '");
    NPY_FAILS(1, "{'descr': '<f4' 'fortran_order': False, 'shape': (1,), }", 4, "expected ',' or '}'");
    NPY_FAILS(1, "{'descr': '<f4", 4, "'descr' is not a short string");
    NPY_FAILS(1, "{'descr': '<f4', 'fortran_order': maybe, 'shape': (1,), }", 4, "not True or False");
    NPY_FAILS(1, "{'descr' '<f4'}", 4, "expected 'key':");
    NPY_FAILS(1, "[1, 2]", 4, "no '{'");
    NPY_FAILS(1, "", 4, "no '{'");

    /* the preamble */
    CHECK_EQ(KGEN_IO_ERR, kgen_io_parse_npy("\x93NUMP", 5, &t, err, sizeof err));
    CHECK_HAS(err, "truncated .npy header (5 bytes)");
    CHECK_EQ(KGEN_IO_ERR, kgen_io_parse_npy(NULL, 0, &t, err, sizeof err));
    CHECK_HAS(err, "truncated .npy header (0 bytes)");
    memcpy(buf, npy_v1, sizeof buf);
    buf[5] = 'X';
    CHECK_EQ(KGEN_IO_ERR, kgen_io_parse_npy(buf, sizeof buf, &t, err, sizeof err));
    CHECK_HAS(err, "bad magic");
    memcpy(buf, npy_v1, sizeof buf);
    buf[6] = 4;
    CHECK_EQ(KGEN_IO_ERR, kgen_io_parse_npy(buf, sizeof buf, &t, err, sizeof err));
    CHECK_HAS(err, "unsupported .npy version 4.0");
    CHECK_EQ(KGEN_IO_ERR, kgen_io_parse_npy(npy_v1, 60, &t, err, sizeof err));
    CHECK_HAS(err, "truncated .npy header: it declares 118 bytes, 50 are left");
    CHECK_EQ(KGEN_IO_ERR, kgen_io_parse_npy(npy_v2, 11, &t, err, sizeof err));
    CHECK_HAS(err, "truncated .npy header (11 bytes)");
    memcpy(buf, npy_v2, sizeof buf);
    buf[11] = 0x80;                                            /* a 2 GiB header */
    CHECK_EQ(KGEN_IO_ERR, kgen_io_parse_npy(buf, sizeof buf, &t, err, sizeof err));
    CHECK_HAS(err, "truncated .npy header: it declares 2147483764 bytes");
    /* err may be NULL or empty */
    CHECK_EQ(KGEN_IO_ERR, kgen_io_parse_npy(buf, sizeof buf, &t, NULL, 0));
    err[0] = 'x';
    CHECK_EQ(KGEN_IO_ERR, kgen_io_parse_npy(buf, sizeof buf, &t, err, 0));
    CHECK_EQ('x', err[0]);
}

/* Every truncation of a valid buffer must fail (it loses data or header); every byte
 * changed to a few values must fail or load a consistent tensor, and never crash. */
static void mutate(const unsigned char *valid, size_t len,
                   int (*parse)(const void *, size_t, kgen_io_tensor *, char *, size_t), int all_truncations_fail)
{
    static const unsigned char vals[] = {0x00, 0xff, 0x80, 0x7f, '9', ',', ')', '\'', 0x01};
    unsigned char *b = (unsigned char *)malloc(len ? len : 1);
    kgen_io_tensor t;
    size_t i, v, bad_trunc = 0, inconsistent = 0, loaded = 0;
    for (i = 0; i < len; i++) {
        memcpy(b, valid, i);                /* a fresh, exact-size copy for ASan */
        if (parse(b, i, &t, err, sizeof err) == KGEN_IO_OK) {
            bad_trunc++;
            kgen_io_free(&t);
        }
    }
    if (all_truncations_fail)
        CHECK_EQ(0, bad_trunc);
    for (i = 0; i < len; i++)
        for (v = 0; v < sizeof vals; v++) {
            memcpy(b, valid, len);
            b[i] = vals[v];
            if (parse(b, len, &t, err, sizeof err) == KGEN_IO_OK) {
                loaded++;
                if (t.nbytes != t.count * kgen_io_dtype_size(t.dtype) || !t.data)
                    inconsistent++;
                kgen_io_free(&t);
            }
        }
    CHECK_EQ(0, inconsistent);
    CHECK(loaded > 0);
    free(b);
}

static void test_npy_mutations(void)
{
    static const int64_t shape[2] = {2, 3};
    static const float vals[6] = {1, 2, 3, 4, 5, 6};
    size_t len = 0;
    unsigned char *bytes = kgen_io_encode_npy(kgen_io_dtype(KGEN_DTYPE_FLOAT, 32), 2, shape, vals, &len, err,
                                              sizeof err);
    CHECK(bytes != NULL);
    if (bytes)
        mutate(bytes, len, kgen_io_parse_npy, 1);
    free(bytes);
    mutate((const unsigned char *)npy_v3, sizeof npy_v3 - 1, kgen_io_parse_npy, 1);
}

static void test_npy_errors(void)
{
    static const int64_t shape[1] = {2};
    static const int64_t neg[1] = {-2};
    static const uint16_t bf[2] = {0x3f80, 0};
    char path[600];
    kgen_io_tensor t;
    size_t len;
    CHECK(kgen_io_encode_npy(kgen_io_dtype(KGEN_DTYPE_BFLOAT, 16), 1, shape, bf, &len, err, sizeof err) == NULL);
    CHECK_HAS(err, ".npy cannot hold dtype bfloat16");
    CHECK(kgen_io_encode_npy(kgen_io_dtype(KGEN_DTYPE_FLOAT, 24), 1, shape, bf, &len, err, sizeof err) == NULL);
    CHECK_HAS(err, ".npy cannot hold dtype ?");
    CHECK(kgen_io_encode_npy(kgen_io_dtype(KGEN_DTYPE_FLOAT, 32), 1, neg, bf, &len, err, sizeof err) == NULL);
    CHECK_HAS(err, "negative");
    CHECK_EQ(KGEN_IO_ERR, kgen_io_write_npy("/nonexistent-dir/x.npy", kgen_io_dtype(KGEN_DTYPE_FLOAT, 16), 1, shape,
                                            bf, err, sizeof err));
    CHECK_HAS(err, "/nonexistent-dir/x.npy: cannot create");
    CHECK_EQ(KGEN_IO_ERR, kgen_io_read("/nonexistent-dir/x.npy", &t, err, sizeof err));
    CHECK_HAS(err, "/nonexistent-dir/x.npy: cannot open");
    CHECK_EQ(KGEN_IO_ERR, kgen_io_read("/nonexistent-dir/x.pb", &t, err, sizeof err));
    CHECK_HAS(err, "/nonexistent-dir/x.pb: cannot open");
    CHECK_EQ(KGEN_IO_ERR, kgen_io_read("data.txt", &t, err, sizeof err));
    CHECK_HAS(err, "data.txt: unknown file type");
    /* a parse error carries the path */
    snprintf(path, sizeof path, "%s/short.npy", tmpdir);
    {
        FILE *f = fopen(path, "wb");
        CHECK(f != NULL);
        if (f) {
            fwrite(npy_v1, 1, 100, f);
            fclose(f);
        }
    }
    CHECK_EQ(KGEN_IO_ERR, kgen_io_read(path, &t, err, sizeof err));
    CHECK_HAS(err, "short.npy: truncated .npy header: it declares 118 bytes, 90 are left");
    /* a directory reads as an error, not a crash */
    CHECK_EQ(KGEN_IO_ERR, kgen_io_read_npy(tmpdir, &t, err, sizeof err));
}

static void test_helpers(void)
{
    static const int64_t shape[3] = {2, 0, 3};
    kgen_io_tensor t;
    kgen_tensor v;
    char ty[64];
    CHECK_STR("float32 []", kgen_io_format_type(ty, sizeof ty, kgen_io_dtype(KGEN_DTYPE_FLOAT, 32), 0, shape));
    CHECK_STR("bfloat16 [2, 0, 3]", kgen_io_format_type(ty, sizeof ty, kgen_io_dtype(KGEN_DTYPE_BFLOAT, 16), 3, shape));
    CHECK_STR("uint6", kgen_io_format_type(ty, 6, kgen_io_dtype(KGEN_DTYPE_UINT, 64), 3, shape));
    CHECK_STR("?", kgen_io_dtype_name(kgen_io_dtype(KGEN_DTYPE_BOOL, 16)));
    CHECK_STR("?", kgen_io_dtype_name(kgen_io_dtype(9, 32)));
    CHECK_EQ(0, kgen_io_dtype_size(kgen_io_dtype(KGEN_DTYPE_FLOAT, 12)));
    CHECK_EQ(1, kgen_io_dtype_size(kgen_io_dtype(KGEN_DTYPE_FLOAT, 8)));     /* float8_e8m0 */
    CHECK_EQ(1, kgen_io_dtype_size(kgen_io_dtype(KGEN_DTYPE_INT, 4)));       /* a byte of two */
    CHECK_EQ(0, kgen_io_packed_bits(kgen_io_dtype(KGEN_DTYPE_INT, 8)));
    CHECK_EQ(2, kgen_io_packed_bits(kgen_io_dtype(KGEN_DTYPE_UINT, 2)));
    CHECK_STR("int4", kgen_io_dtype_name(kgen_io_dtype(KGEN_DTYPE_INT, 4)));
    CHECK_STR("uint2", kgen_io_dtype_name(kgen_io_dtype(KGEN_DTYPE_UINT, 2)));
    CHECK_STR("float4_e2m1fn", kgen_io_dtype_name(kgen_io_dtype(KGEN_DTYPE_FLOAT, 4)));
    CHECK_STR("float8_e8m0fnu", kgen_io_dtype_name(kgen_io_dtype(KGEN_DTYPE_FLOAT, 8)));
    CHECK(kgen_io_lowbit_float(kgen_io_dtype(KGEN_DTYPE_FLOAT, 4), 15) == -6.0);
    CHECK(kgen_io_lowbit_float(kgen_io_dtype(KGEN_DTYPE_FLOAT, 8), 127) == 1.0);
    CHECK_EQ(KGEN_IO_OK, kgen_io_alloc(&t, kgen_io_dtype(KGEN_DTYPE_INT, 32), 3, shape, err, sizeof err));
    CHECK(t.data != NULL && aligned64(t.data) && t.count == 0 && t.nbytes == 0);
    v = kgen_io_view(&t);
    CHECK(v.data == t.data && v.ndim == 3 && v.shape == t.shape && v.strides == NULL && v.byte_offset == 0);
    CHECK_EQ(KGEN_DEVICE_CPU, v.device.device_type);
    CHECK_EQ(KGEN_OK, kgen_check_tensor(&v, KGEN_DEVICE_CPU, KGEN_DTYPE_INT, 32, 3, shape, shape));
    kgen_io_free(&t);
    kgen_io_free(NULL);
    CHECK_EQ(KGEN_IO_ERR, kgen_io_alloc(&t, kgen_io_dtype(KGEN_DTYPE_FLOAT, 12), 3, shape, err, sizeof err));
    CHECK_HAS(err, "unsupported dtype");
}

/* ---------------------------------------------------------------- .pb */

typedef struct {
    unsigned char b[4096];
    size_t n;
} Msg;

static void put_varint(Msg *m, uint64_t v)
{
    while (v >= 0x80) {
        m->b[m->n++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    m->b[m->n++] = (unsigned char)v;
}

static void put_key(Msg *m, unsigned field, unsigned wire) { put_varint(m, (uint64_t)field << 3 | wire); }

static void put_fixed(Msg *m, uint64_t v, int n)
{
    int i;
    for (i = 0; i < n; i++)
        m->b[m->n++] = (unsigned char)(v >> (8 * i));
}

static void put_bytes(Msg *m, unsigned field, const void *p, size_t n)
{
    put_key(m, field, 2);
    put_varint(m, n);
    memcpy(m->b + m->n, p, n);
    m->n += n;
}

static void put_int(Msg *m, unsigned field, uint64_t v)
{
    put_key(m, field, 0);
    put_varint(m, v);
}

static uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static uint64_t f64_bits(double f)
{
    uint64_t u;
    memcpy(&u, &f, 8);
    return u;
}

/* a packed field of varints */
static void put_packed(Msg *m, unsigned field, const int64_t *v, int n)
{
    Msg body;
    int i;
    body.n = 0;
    for (i = 0; i < n; i++)
        put_varint(&body, (uint64_t)v[i]);
    put_bytes(m, field, body.b, body.n);
}

static int pb_parse(Msg *m, kgen_io_tensor *t) { return kgen_io_parse_pb(m->b, m->n, t, err, sizeof err); }

static void pb_fails(int line, Msg *m, const char *msg)
{
    kgen_io_tensor t;
    int rc = pb_parse(m, &t);
    if (rc != KGEN_IO_ERR || !strstr(err, msg))
        fprintf(stderr, "test_io.c:%d: the buffer must fail\n", line);
    CHECK_EQ(KGEN_IO_ERR, rc);
    CHECK_HAS(err, msg);
    CHECK(t.data == NULL);
    kgen_io_free(&t);
}

#define PB_FAILS(m, msg) pb_fails(__LINE__, m, msg)

/* int4 / uint2 tensors: packed as ONNX stores them, from raw_data or int32_data (one packed
 * byte an entry); .npy (u)int8 inputs packed by kgen_io_pack, outputs written unpacked */
static void test_pb_packed(void)
{
    Msg m;
    kgen_io_tensor t, u;
    kgen_dtype i4 = kgen_io_dtype(KGEN_DTYPE_INT, 4), u2 = kgen_io_dtype(KGEN_DTYPE_UINT, 2);
    int64_t codes[2] = {0x87, 0x0f}, shape[1] = {3};
    unsigned char *npy;
    size_t len;
    m.n = 0;
    put_int(&m, 1, 3);
    put_int(&m, 2, 22);
    put_bytes(&m, 9, "\x87\x0f", 2);
    CHECK_EQ(KGEN_IO_OK, pb_parse(&m, &t));
    CHECK(kgen_io_dtype_equal(t.dtype, i4) && t.count == 3 && t.nbytes == 2);
    CHECK_EQ(7, kgen_io_packed_get(t.data, 0, t.dtype));
    CHECK_EQ(-8, kgen_io_packed_get(t.data, 1, t.dtype));
    CHECK_EQ(-1, kgen_io_packed_get(t.data, 2, t.dtype));
    npy = kgen_io_encode_npy(t.dtype, t.ndim, t.shape, t.data, &len, err, sizeof err);
    CHECK(npy != NULL);
    if (npy) {
        CHECK_EQ(KGEN_IO_OK, kgen_io_parse_npy(npy, len, &u, err, sizeof err));
        CHECK(kgen_io_dtype_equal(u.dtype, kgen_io_dtype(KGEN_DTYPE_INT, 8)) && u.count == 3);
        CHECK(u.count == 3 && ((int8_t *)u.data)[1] == -8 && ((int8_t *)u.data)[2] == -1);
        CHECK_EQ(KGEN_IO_OK, kgen_io_pack(&u, i4, err, sizeof err));
        CHECK(kgen_io_dtype_equal(u.dtype, i4) && u.nbytes == 2 && !memcmp(u.data, t.data, 2));
        kgen_io_free(&u);
        free(npy);
    }
    kgen_io_free(&t);
    m.n = 0;
    put_int(&m, 1, 5);
    put_int(&m, 2, 25);
    put_packed(&m, 5, codes, 2);
    CHECK_EQ(KGEN_IO_OK, pb_parse(&m, &t));
    CHECK(kgen_io_dtype_equal(t.dtype, u2) && t.count == 5 && t.nbytes == 2);
    CHECK_EQ(3, kgen_io_packed_get(t.data, 0, t.dtype));
    CHECK_EQ(2, kgen_io_packed_get(t.data, 3, t.dtype));
    CHECK_EQ(3, kgen_io_packed_get(t.data, 4, t.dtype));
    kgen_io_free(&t);
    /* a value out of the range is refused */
    CHECK_EQ(KGEN_IO_OK, kgen_io_alloc(&u, kgen_io_dtype(KGEN_DTYPE_INT, 8), 1, shape, err, sizeof err));
    ((int8_t *)u.data)[2] = 8;
    CHECK_EQ(KGEN_IO_ERR, kgen_io_pack(&u, i4, err, sizeof err));
    CHECK_HAS(err, "element 2 is 8, outside int4's range -8..7");
    kgen_io_free(&u);
    CHECK(kgen_io_encode_npy(kgen_io_dtype(KGEN_DTYPE_FLOAT, 4), 1, shape, "\0\0", &len, err, sizeof err) == NULL);
}

static void test_pb_handmade(void)
{
    static const int64_t dims23[2] = {2, 3}, i8vals[4] = {-1, -128, 127, 5}, boolv[3] = {1, 0, 1};
    kgen_io_tensor t;
    Msg m;
    int i;
    char ty[100];

    /* unpacked dims and float_data, with unknown fields of every wire type around them */
    m.n = 0;
    put_int(&m, 1, 2);
    put_bytes(&m, 12, "doc", 3);
    put_int(&m, 1, 3);
    put_int(&m, 99, 12345);
    put_int(&m, 2, 1);
    put_key(&m, 100, 1);
    put_fixed(&m, 7, 8);
    put_key(&m, 101, 5);
    put_fixed(&m, 7, 4);
    put_bytes(&m, 8, "hello", 5);
    for (i = 0; i < 6; i++) {
        put_key(&m, 4, 5);
        put_fixed(&m, f32_bits((float)i - 2.5f), 4);
    }
    CHECK_EQ(KGEN_IO_OK, pb_parse(&m, &t));
    CHECK_STR("float32 [2, 3]", kgen_io_format_type(ty, sizeof ty, t.dtype, t.ndim, t.shape));
    CHECK_STR("hello", t.name);
    for (i = 0; i < 6 && t.data; i++)
        CHECK(f32_at(&t, (size_t)i) == (float)i - 2.5f);
    kgen_io_free(&t);

    /* packed dims, float_data packed in two chunks and one unpacked value */
    m.n = 0;
    put_packed(&m, 1, dims23, 2);
    put_int(&m, 2, 1);
    {
        Msg body;
        body.n = 0;
        put_fixed(&body, f32_bits(1.0f), 4);
        put_fixed(&body, f32_bits(2.0f), 4);
        put_bytes(&m, 4, body.b, body.n);
        put_key(&m, 4, 5);
        put_fixed(&m, f32_bits(3.0f), 4);
        body.n = 0;
        put_fixed(&body, f32_bits(-4.0f), 4);
        put_fixed(&body, f32_bits(INFINITY), 4);
        put_fixed(&body, f32_bits(-0.0f), 4);
        put_bytes(&m, 4, body.b, body.n);
    }
    CHECK_EQ(KGEN_IO_OK, pb_parse(&m, &t));
    CHECK_EQ(6, t.count);
    CHECK(t.data && f32_at(&t, 0) == 1.0f && f32_at(&t, 2) == 3.0f && f32_at(&t, 3) == -4.0f &&
          isinf(f32_at(&t, 4)) && signbit(f32_at(&t, 5)));
    CHECK_STR("", t.name);
    kgen_io_free(&t);

    /* int8 in int32_data: negative values arrive as 10-byte varints */
    m.n = 0;
    put_int(&m, 1, 4);
    put_int(&m, 2, 3);
    put_packed(&m, 5, i8vals, 4);
    CHECK_EQ(KGEN_IO_OK, pb_parse(&m, &t));
    CHECK_STR("int8 [4]", kgen_io_format_type(ty, sizeof ty, t.dtype, t.ndim, t.shape));
    for (i = 0; i < 4 && t.data; i++)
        CHECK_EQ(i8vals[i], int_at(&t, (size_t)i));
    kgen_io_free(&t);

    /* int16, uint16, uint8, int32 in int32_data, unpacked */
    {
        static const int types[4] = {5, 4, 2, 6};
        static const int64_t vals[4][2] = {{-32768, 32767}, {0, 65535}, {0, 255}, {-2147483647 - 1, 2147483647}};
        for (i = 0; i < 4; i++) {
            m.n = 0;
            put_int(&m, 1, 2);
            put_int(&m, 2, (uint64_t)types[i]);
            put_int(&m, 5, (uint64_t)vals[i][0]);
            put_int(&m, 5, (uint64_t)vals[i][1]);
            CHECK_EQ(KGEN_IO_OK, pb_parse(&m, &t));
            CHECK(t.data && int_at(&t, 0) == vals[i][0] && int_at(&t, 1) == vals[i][1]);
            kgen_io_free(&t);
        }
    }

    /* bool and float16 in int32_data */
    m.n = 0;
    put_int(&m, 1, 3);
    put_int(&m, 2, 9);
    put_packed(&m, 5, boolv, 3);
    CHECK_EQ(KGEN_IO_OK, pb_parse(&m, &t));
    CHECK_STR("bool [3]", kgen_io_format_type(ty, sizeof ty, t.dtype, t.ndim, t.shape));
    CHECK(t.data && memcmp(t.data, "\1\0\1", 3) == 0);
    kgen_io_free(&t);
    m.n = 0;
    put_int(&m, 2, 10);
    put_int(&m, 5, 0x3c00);                    /* a scalar: no dims */
    CHECK_EQ(KGEN_IO_OK, pb_parse(&m, &t));
    CHECK_STR("float16 []", kgen_io_format_type(ty, sizeof ty, t.dtype, t.ndim, t.shape));
    CHECK(t.data && t.count == 1 && int_at(&t, 0) == 0x3c00 && kgen_f16_to_f32((uint16_t)int_at(&t, 0)) == 1.0f);
    kgen_io_free(&t);

    /* int64_data, unpacked, with INT64_MIN */
    m.n = 0;
    put_int(&m, 1, 2);
    put_int(&m, 2, 7);
    put_int(&m, 7, (uint64_t)-5);
    put_int(&m, 7, (uint64_t)1 << 63);
    CHECK_EQ(KGEN_IO_OK, pb_parse(&m, &t));
    CHECK(t.data && int_at(&t, 0) == -5 && int_at(&t, 1) == INT64_MIN);
    kgen_io_free(&t);

    /* double_data packed, then unpacked */
    m.n = 0;
    put_int(&m, 1, 2);
    put_int(&m, 2, 11);
    {
        Msg body;
        body.n = 0;
        put_fixed(&body, f64_bits(0.1), 8);
        put_bytes(&m, 10, body.b, body.n);
        put_key(&m, 10, 1);
        put_fixed(&m, f64_bits(-1e300), 8);
    }
    CHECK_EQ(KGEN_IO_OK, pb_parse(&m, &t));
    CHECK(t.data && f64_at(&t, 0) == 0.1 && f64_at(&t, 1) == -1e300);
    kgen_io_free(&t);

    /* uint64_data for UINT32 and UINT64 */
    m.n = 0;
    put_int(&m, 1, 1);
    put_int(&m, 2, 12);
    put_int(&m, 11, 4000000000u);
    CHECK_EQ(KGEN_IO_OK, pb_parse(&m, &t));
    CHECK(t.data && int_at(&t, 0) == 4000000000LL);
    kgen_io_free(&t);
    m.n = 0;
    put_int(&m, 1, 1);
    put_int(&m, 2, 13);
    put_int(&m, 11, UINT64_MAX);
    CHECK_EQ(KGEN_IO_OK, pb_parse(&m, &t));
    CHECK(t.data && (uint64_t)int_at(&t, 0) == UINT64_MAX);
    kgen_io_free(&t);

    /* raw_data wins over typed fields; int16 and bfloat16 */
    m.n = 0;
    put_int(&m, 1, 2);
    put_int(&m, 2, 5);
    put_bytes(&m, 9, "\x01\x80\xff\x7f", 4);
    CHECK_EQ(KGEN_IO_OK, pb_parse(&m, &t));
    CHECK(t.data && int_at(&t, 0) == -32767 && int_at(&t, 1) == 32767);
    kgen_io_free(&t);
    m.n = 0;
    put_int(&m, 1, 1);
    put_int(&m, 2, 16);
    put_bytes(&m, 9, "\x80\x3f", 2);
    CHECK_EQ(KGEN_IO_OK, pb_parse(&m, &t));
    CHECK_STR("bfloat16 [1]", kgen_io_format_type(ty, sizeof ty, t.dtype, t.ndim, t.shape));
    CHECK(t.data && int_at(&t, 0) == 0x3f80);
    kgen_io_free(&t);

    /* empty: dims [0] and no payload */
    m.n = 0;
    put_int(&m, 1, 0);
    put_int(&m, 2, 1);
    CHECK_EQ(KGEN_IO_OK, pb_parse(&m, &t));
    CHECK(t.data != NULL && t.count == 0 && t.ndim == 1 && t.shape[0] == 0);
    kgen_io_free(&t);

    /* the error corpus */
    m.n = 0;
    m.b[m.n++] = 0x08;
    m.b[m.n++] = 0x80;
    PB_FAILS(&m, "bad varint in field 1");
    m.n = 0;
    m.b[m.n++] = 0x80;
    PB_FAILS(&m, "bad field key");
    m.n = 0;
    m.b[m.n++] = 0x00;
    PB_FAILS(&m, "field number 0");
    m.n = 0;
    put_key(&m, 1, 0);
    for (i = 0; i < 10; i++)
        m.b[m.n++] = 0xff;
    m.b[m.n++] = 0x01;
    PB_FAILS(&m, "bad varint");
    m.n = 0;
    put_key(&m, 1, 0);
    for (i = 0; i < 9; i++)
        m.b[m.n++] = 0xff;
    m.b[m.n++] = 0x02;                        /* bit 64 */
    PB_FAILS(&m, "bad varint");
    m.n = 0;
    put_key(&m, 9, 2);
    put_varint(&m, 16);
    memcpy(m.b + m.n, "ab", 2);
    m.n += 2;
    PB_FAILS(&m, "field 9 runs past the end");
    m.n = 0;
    put_key(&m, 9, 2);
    put_varint(&m, UINT64_MAX);
    PB_FAILS(&m, "field 9 runs past the end");
    m.n = 0;
    put_key(&m, 5, 3);
    PB_FAILS(&m, "wire type 3 in field 5");
    m.n = 0;
    put_key(&m, 5, 1);
    put_fixed(&m, 0, 4);
    PB_FAILS(&m, "truncated field 5");
    m.n = 0;
    put_key(&m, 5, 5);
    put_fixed(&m, 0, 3);
    PB_FAILS(&m, "truncated field 5");
    m.n = 0;
    put_bytes(&m, 2, "\x01", 1);
    PB_FAILS(&m, "data_type has wire type 2");
    m.n = 0;
    put_int(&m, 2, 1);
    put_int(&m, 9, 1);
    PB_FAILS(&m, "raw_data has wire type 0");
    m.n = 0;
    put_int(&m, 1, 3);
    put_int(&m, 2, 1);
    put_bytes(&m, 9, "12345678", 8);
    PB_FAILS(&m, "raw_data is 8 bytes, but float32 [3] needs 12");
    m.n = 0;
    put_int(&m, 1, 3);
    put_int(&m, 2, 1);
    put_key(&m, 4, 5);
    put_fixed(&m, 0, 4);
    put_key(&m, 4, 5);
    put_fixed(&m, 0, 4);
    PB_FAILS(&m, "float_data has 2 values, but float32 [3] needs 3");
    m.n = 0;
    put_int(&m, 1, 3);
    put_int(&m, 2, 1);
    put_int(&m, 4, 7);
    PB_FAILS(&m, "float_data has wire type 0");
    m.n = 0;
    put_int(&m, 1, 1);
    put_int(&m, 2, 1);
    put_bytes(&m, 4, "\0\0\0\0\0", 5);
    PB_FAILS(&m, "packed float_data is 5 bytes");
    m.n = 0;
    put_int(&m, 1, 1);
    put_int(&m, 2, 7);
    put_bytes(&m, 7, "\xff\xff", 2);
    PB_FAILS(&m, "bad varint in int64_data");
    m.n = 0;
    put_int(&m, 1, 1);
    put_int(&m, 2, 1);
    put_bytes(&m, 1, "\x80", 1);
    PB_FAILS(&m, "bad varint in dims");
    m.n = 0;
    put_int(&m, 1, (uint64_t)-1);
    put_int(&m, 2, 1);
    PB_FAILS(&m, "negative dim (-1)");
    m.n = 0;
    for (i = 0; i < 17; i++)
        put_int(&m, 1, 1);
    put_int(&m, 2, 1);
    PB_FAILS(&m, "17 dims");
    m.n = 0;
    put_int(&m, 1, (uint64_t)1 << 40);
    put_int(&m, 1, (uint64_t)1 << 40);
    put_int(&m, 2, 1);
    PB_FAILS(&m, "shape too large");
    m.n = 0;
    put_int(&m, 1, 1000000000000LL);
    put_int(&m, 2, 1);
    PB_FAILS(&m, "float_data has 0 values, but float32 [1000000000000] needs 1000000000000");
    m.n = 0;
    put_int(&m, 1, 1);
    put_int(&m, 2, 1);
    put_int(&m, 14, 1);
    PB_FAILS(&m, "external data");
    m.n = 0;
    put_int(&m, 1, 1);
    put_int(&m, 2, 22);
    PB_FAILS(&m, "int32_data has 0 values, but int4 [1] needs 1");
    m.n = 0;
    put_int(&m, 1, 3);
    put_int(&m, 2, 22);
    put_bytes(&m, 9, "\x87\x0f\x00", 3);
    PB_FAILS(&m, "raw_data is 3 bytes, but int4 [3] needs 2");
    test_pb_packed();
    m.n = 0;
    put_int(&m, 2, 8);
    PB_FAILS(&m, "(STRING) is not supported");
    m.n = 0;
    put_int(&m, 2, 1000);
    PB_FAILS(&m, "data_type 1000 (unknown)");
    m.n = 0;
    put_int(&m, 1, 1);
    PB_FAILS(&m, "no data_type");
    m.n = 0;
    put_bytes(&m, 3, "", 0);
    PB_FAILS(&m, "segmented");
    CHECK_EQ(KGEN_IO_ERR, kgen_io_parse_pb(NULL, 0, &t, err, sizeof err));
    CHECK_HAS(err, "no data_type");
}

/* ---------------------------------------------------------------- the ONNX node tests */

static char *join(const char *dir, const char *rel)
{
    size_t n = strlen(dir) + strlen(rel) + 2;
    char *p = (char *)malloc(n);
    snprintf(p, n, "%s/%s", dir, rel);
    return p;
}

static int read_node(const char *dir, const char *rel, kgen_io_tensor *t)
{
    char *p = join(dir, rel);
    int rc = kgen_io_read(p, t, err, sizeof err);
    if (rc != KGEN_IO_OK)
        fprintf(stderr, "%s\n", err);
    free(p);
    return rc;
}

/* values from onnx.numpy_helper.to_array of the same files */
static void test_pb_node_values(const char *dir)
{
    kgen_io_tensor t;
    char ty[100];
    int i;
    static const int16_t q[6] = {4, -5, -4, 2, 0, 3};
    static const uint64_t u64[6] = {14, 0, 19, 6, 1, 12};

    CHECK_EQ(KGEN_IO_OK, read_node(dir, "test_add/test_data_set_0/input_0.pb", &t));
    CHECK_STR("float32 [3, 4, 5]", kgen_io_format_type(ty, sizeof ty, t.dtype, t.ndim, t.shape));
    CHECK_STR("x", t.name);
    CHECK(t.data && f32_at(&t, 0) == 1.764052391052246f && f32_at(&t, 1) == 0.40015721321105957f &&
          f32_at(&t, 2) == 0.978738009929657f && f32_at(&t, 59) == -0.36274117f);
    kgen_io_free(&t);

    CHECK_EQ(KGEN_IO_OK, read_node(dir, "test_add_int16/test_data_set_0/input_0.pb", &t));
    CHECK_STR("int16 [3, 4, 5]", kgen_io_format_type(ty, sizeof ty, t.dtype, t.ndim, t.shape));
    CHECK(t.data && i16_at(&t, 0) == 18 && i16_at(&t, 1) == 21 && i16_at(&t, 2) == 0 && i16_at(&t, 3) == 1);
    kgen_io_free(&t);

    CHECK_EQ(KGEN_IO_OK, read_node(dir, "test_cast_FLOAT_to_DOUBLE/test_data_set_0/output_0.pb", &t));
    CHECK_STR("float64 [3, 4]", kgen_io_format_type(ty, sizeof ty, t.dtype, t.ndim, t.shape));
    CHECK(t.data && f64_at(&t, 0) == 0.4789254665374756 && f64_at(&t, 2) == 0.4996848702430725 &&
          isinf(f64_at(&t, 11)) && f64_at(&t, 11) < 0);
    kgen_io_free(&t);

    CHECK_EQ(KGEN_IO_OK, read_node(dir, "test_and2d/test_data_set_0/input_1.pb", &t));
    CHECK_STR("bool [3, 4]", kgen_io_format_type(ty, sizeof ty, t.dtype, t.ndim, t.shape));
    CHECK(t.data && int_at(&t, 0) == 1 && int_at(&t, 1) == 1 && int_at(&t, 2) == 1 && int_at(&t, 11) == 0);
    kgen_io_free(&t);

    CHECK_EQ(KGEN_IO_OK, read_node(dir, "test_add_uint64/test_data_set_0/input_0.pb", &t));
    CHECK_STR("uint64 [3, 4, 5]", kgen_io_format_type(ty, sizeof ty, t.dtype, t.ndim, t.shape));
    for (i = 0; i < 6 && t.data; i++)
        CHECK_EQ(u64[i], int_at(&t, (size_t)i));
    kgen_io_free(&t);

    CHECK_EQ(KGEN_IO_OK, read_node(dir, "test_add_uint8/test_data_set_0/output_0.pb", &t));
    CHECK(t.data && int_at(&t, 0) == 42 && int_at(&t, 1) == 43 && int_at(&t, 2) == 25 && int_at(&t, 59) == 14);
    kgen_io_free(&t);

    /* int16 stored in int32_data, with negative values */
    CHECK_EQ(KGEN_IO_OK, read_node(dir, "test_quantizelinear_blocked_symmetric/test_data_set_0/output_0.pb", &t));
    CHECK_STR("int16 [3, 4]", kgen_io_format_type(ty, sizeof ty, t.dtype, t.ndim, t.shape));
    for (i = 0; i < 6 && t.data; i++)
        CHECK_EQ(q[i], i16_at(&t, (size_t)i));
    CHECK(t.data && i16_at(&t, 11) == 1);
    kgen_io_free(&t);

    /* an empty tensor: shape [0], no payload */
    CHECK_EQ(KGEN_IO_OK, read_node(dir, "test_castlike_BFLOAT16_to_FLOAT/test_data_set_0/input_1.pb", &t));
    CHECK_STR("float32 [0]", kgen_io_format_type(ty, sizeof ty, t.dtype, t.ndim, t.shape));
    CHECK(t.data != NULL && t.count == 0);
    kgen_io_free(&t);

    CHECK_EQ(KGEN_IO_OK, read_node(dir, "test_cast_BFLOAT16_to_FLOAT/test_data_set_0/input_0.pb", &t));
    CHECK_STR("bfloat16 [3, 4]", kgen_io_format_type(ty, sizeof ty, t.dtype, t.ndim, t.shape));
    CHECK(t.data && int_at(&t, 0) == 0x3ef5 && int_at(&t, 1) == 0x3ef6 && int_at(&t, 11) == 0xff80);
    kgen_io_free(&t);

    /* int4, packed: two to a byte, the first in the low bits */
    CHECK_EQ(KGEN_IO_OK, read_node(dir, "test_cast_INT4_to_INT8/test_data_set_0/input_0.pb", &t));
    CHECK_STR("int4 [5, 5]", kgen_io_format_type(ty, sizeof ty, t.dtype, t.ndim, t.shape));
    CHECK(t.data && t.nbytes == 13 && kgen_io_packed_get(t.data, 0, t.dtype) == 7 && kgen_io_packed_get(t.data, 1, t.dtype) == -8 &&
          kgen_io_packed_get(t.data, 24, t.dtype) == -1);
    kgen_io_free(&t);

    /* truncations of a real file all fail; mutations never crash */
    {
        char *p = join(dir, "test_add/test_data_set_0/input_0.pb");
        size_t len = 0;
        unsigned char *bytes = kgen_io_slurp(p, &len, err, sizeof err);
        CHECK(bytes != NULL);
        if (bytes)
            mutate(bytes, len, kgen_io_parse_pb, 1);
        free(bytes);
        free(p);
        p = join(dir, "test_quantizelinear_blocked_symmetric/test_data_set_0/output_0.pb");
        bytes = kgen_io_slurp(p, &len, err, sizeof err);
        CHECK(bytes != NULL);
        if (bytes)
            mutate(bytes, len, kgen_io_parse_pb, 0);
        free(bytes);
        free(p);
    }
}

/* the NumPy name of a MANIFEST.tsv (TensorProto) type name, NULL when unsupported */
static const char *numpy_name(const char *onnx)
{
    static const char *const map[][2] = {
        {"FLOAT", "float32"}, {"DOUBLE", "float64"}, {"FLOAT16", "float16"}, {"BFLOAT16", "bfloat16"},
        {"INT8", "int8"},     {"INT16", "int16"},    {"INT32", "int32"},     {"INT64", "int64"},
        {"UINT8", "uint8"},   {"UINT16", "uint16"},  {"UINT32", "uint32"},   {"UINT64", "uint64"},
        {"BOOL", "bool"},     {"FLOAT8E4M3FN", "float8_e4m3fn"}, {"FLOAT8E4M3FNUZ", "float8_e4m3fnuz"},
        {"FLOAT8E5M2", "float8_e5m2"}, {"FLOAT8E5M2FNUZ", "float8_e5m2fnuz"}, {"INT4", "int4"},
        {"UINT4", "uint4"}, {"INT2", "int2"}, {"UINT2", "uint2"}, {"FLOAT4E2M1", "float4_e2m1fn"},
        {"FLOAT8E8M0", "float8_e8m0fnu"}};
    size_t i;
    for (i = 0; i < sizeof map / sizeof map[0]; i++)
        if (!strcmp(map[i][0], onnx))
            return map[i][1];
    return NULL;
}

/* every input_K.pb / output_K.pb: its dtype is the one MANIFEST.tsv lists, or it is a
 * type this reader refuses with a message */
static void test_pb_node_all(const char *dir)
{
    char line[4096], rel[1200];
    char *mpath = join(dir, "MANIFEST.tsv");
    FILE *f = fopen(mpath, "r");
    int files = 0, loaded = 0, refused = 0, wrong = 0, side, k;
    CHECK(f != NULL);
    free(mpath);
    if (!f)
        return;
    if (!fgets(line, sizeof line, f)) {
        fclose(f);
        return;
    }
    while (fgets(line, sizeof line, f)) {
        char *col[6], *s = line, *tok, *save;
        int c;
        for (c = 0; c < 6; c++) {
            col[c] = s;
            s = s ? strchr(s, '\t') : NULL;
            if (s)
                *s++ = 0;
        }
        if (!col[5])
            continue;
        for (side = 0; side < 2; side++) {
            char types[1024];
            snprintf(types, sizeof types, "%s", col[3 + side]);
            for (k = 0, tok = strtok_r(types, ",", &save); tok; tok = strtok_r(NULL, ",", &save), k++) {
                kgen_io_tensor t;
                char *p;
                const char *want = numpy_name(tok);
                FILE *probe;
                snprintf(rel, sizeof rel, "%s/test_data_set_0/%s_%d.pb", col[0], side ? "output" : "input", k);
                p = join(dir, rel);
                probe = fopen(p, "rb");
                if (!probe) {                   /* an optional input left out */
                    free(p);
                    continue;
                }
                fclose(probe);
                files++;
                if (kgen_io_read(p, &t, err, sizeof err) == KGEN_IO_OK) {
                    loaded++;
                    size_t nb = kgen_io_packed_bits(t.dtype)
                                    ? (t.count * (size_t)kgen_io_packed_bits(t.dtype) + 7) / 8
                                    : t.count * kgen_io_dtype_size(t.dtype);
                    if (!want || strcmp(want, kgen_io_dtype_name(t.dtype)) || t.nbytes != nb) {
                        wrong++;
                        fprintf(stderr, "%s: read as %s, MANIFEST.tsv says %s\n", rel, kgen_io_dtype_name(t.dtype), tok);
                    }
                } else if (!want && strstr(err, "is not supported")) {
                    refused++;
                } else {
                    wrong++;
                    fprintf(stderr, "%s (%s): %s\n", rel, tok, err);
                }
                kgen_io_free(&t);
                free(p);
            }
        }
    }
    fclose(f);
    CHECK_EQ(0, wrong);
    CHECK(files > 2500);
    CHECK(loaded > 2300);
    printf("node tests: %d .pb files, %d loaded, %d refused (unsupported types), %d wrong\n", files, loaded,
           refused, wrong);
}

int main(int argc, char **argv)
{
    const char *base = getenv("TMPDIR");
    const char *nodes = argc > 1 ? argv[1] : "tests/data/onnx-node-tests";
    char *probe;
    FILE *f;
    snprintf(tmpdir, sizeof tmpdir, "%s/kgen_io_XXXXXX", base && base[0] ? base : "/tmp");
    if (!mkdtemp(tmpdir)) {
        CHECK(!"mkdtemp");
        return test_done("io");
    }
    test_helpers();
    test_npy_roundtrip();
    test_npy_numpy_files();
    test_npy_headers();
    test_npy_mutations();
    test_npy_errors();
    test_pb_handmade();

    probe = join(nodes, "test_add/test_data_set_0/input_0.pb");
    f = fopen(probe, "rb");
    if (f) {
        fclose(f);
        test_pb_node_values(nodes);
        test_pb_node_all(nodes);
    } else
        printf("io: ONNX node tests not found in %s, their checks skipped\n", nodes);
    free(probe);

    /* the files test_npy_roundtrip and test_npy_errors wrote */
    {
        char path[600];
        int d;
        for (d = 0; d < NDTYPES; d++) {
            snprintf(path, sizeof path, "%s/%s.npy", tmpdir, dtypes[d].name);
            remove(path);
        }
        snprintf(path, sizeof path, "%s/short.npy", tmpdir);
        remove(path);
        CHECK_EQ(0, rmdir(tmpdir));
    }
    return test_done("io");
}
