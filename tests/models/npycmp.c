/* npycmp - compare a computed tensor with a reference, elementwise, within a tolerance.
 *
 *     npycmp [--rtol R] [--atol A] REF.npy OUT.npy      two .npy files: same dtype and shape
 *     npycmp [--rtol R] [--atol A] REF.npy --text FILE  FILE holds the values as text
 *                                                        (one number per whitespace-separated
 *                                                        word; other lines are ignored)
 *
 * An element passes when |out - ref| <= atol + rtol * |ref| (numpy.allclose's rule);
 * NaN matches only NaN. Defaults: rtol 1e-3, atol 1e-4. Prints one line with the element
 * count and the largest errors; on a mismatch also the first few offending elements.
 * Exit status: 0 all close, 1 mismatch, 2 usage or I/O error.
 *
 * Build: cc -std=c99 -I templates tests/models/npycmp.c -o npycmp -lm
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kgen_io.h"

/* Element i of t as a double; every dtype kgen_io reads. */
static double elem(const kgen_io_tensor *t, size_t i)
{
    const unsigned char *p = (const unsigned char *)t->data;
    kgen_dtype dt = t->dtype;
    switch (dt.code) {
    case KGEN_DTYPE_FLOAT:
        if (dt.bits == 32)
            return ((const float *)p)[i];
        if (dt.bits == 64)
            return ((const double *)p)[i];
        return kgen_f16_to_f32(((const uint16_t *)p)[i]);
    case KGEN_DTYPE_BFLOAT:
        return kgen_bits_f32((uint32_t)((const uint16_t *)p)[i] << 16);
    case KGEN_DTYPE_INT:
        switch (dt.bits) {
        case 8: return ((const int8_t *)p)[i];
        case 16: return ((const int16_t *)p)[i];
        case 32: return ((const int32_t *)p)[i];
        default: return (double)((const int64_t *)p)[i];
        }
    case KGEN_DTYPE_UINT:
        switch (dt.bits) {
        case 8: return ((const uint8_t *)p)[i];
        case 16: return ((const uint16_t *)p)[i];
        case 32: return ((const uint32_t *)p)[i];
        default: return (double)((const uint64_t *)p)[i];
        }
    case KGEN_DTYPE_BOOL:
        return p[i] != 0;
    default:
        return NAN;
    }
}

/* Read the numbers of a text file: every word that parses whole as a number. */
static double *read_text(const char *path, size_t *n)
{
    char err[256], *s, *tok, *end;
    size_t len, cap = 64;
    unsigned char *buf = kgen_io_slurp(path, &len, err, sizeof err);
    double *v;
    if (!buf) {
        fprintf(stderr, "npycmp: %s\n", err);
        return NULL;
    }
    v = (double *)malloc(cap * sizeof *v);
    *n = 0;
    for (s = (char *)buf; v && (tok = strtok(s, " \t\r\n")) != NULL; s = NULL) {
        double x = strtod(tok, &end);
        if (end == tok || *end)
            continue;
        if (*n == cap) {
            double *nv = (double *)realloc(v, 2 * cap * sizeof *v);
            if (!nv) {
                free(v);
                v = NULL;
                break;
            }
            v = nv;
            cap *= 2;
        }
        v[(*n)++] = x;
    }
    free(buf);
    if (!v)
        fprintf(stderr, "npycmp: out of memory\n");
    return v;
}

static int usage(void)
{
    fprintf(stderr, "usage: npycmp [--rtol R] [--atol A] REF.npy (OUT.npy | --text FILE)\n");
    return 2;
}

int main(int argc, char **argv)
{
    double rtol = 1e-3, atol = 1e-4, max_abs = 0.0, max_rel = 0.0, *text = NULL;
    const char *ref_path = NULL, *out_path = NULL, *text_path = NULL;
    kgen_io_tensor ref, out;
    char err[256], b1[128], b2[128];
    size_t i, n, bad = 0;
    int a;

    kgen_io_init(&ref);
    kgen_io_init(&out);
    for (a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "--rtol") && a + 1 < argc)
            rtol = atof(argv[++a]);
        else if (!strcmp(argv[a], "--atol") && a + 1 < argc)
            atol = atof(argv[++a]);
        else if (!strcmp(argv[a], "--text") && a + 1 < argc)
            text_path = argv[++a];
        else if (argv[a][0] == '-' && argv[a][1] == '-')
            return usage();
        else if (!ref_path)
            ref_path = argv[a];
        else if (!out_path)
            out_path = argv[a];
        else
            return usage();
    }
    if (!ref_path || (!out_path) == (!text_path))
        return usage();

    if (kgen_io_read(ref_path, &ref, err, sizeof err) != KGEN_IO_OK) {
        fprintf(stderr, "npycmp: %s\n", err);
        return 2;
    }
    if (text_path) {
        text = read_text(text_path, &n);
        if (!text)
            return 2;
        if (n != ref.count) {
            fprintf(stderr, "npycmp: %s has %lu numbers, %s has %lu elements\n", text_path,
                    (unsigned long)n, ref_path, (unsigned long)ref.count);
            return 1;
        }
    } else {
        if (kgen_io_read(out_path, &out, err, sizeof err) != KGEN_IO_OK) {
            fprintf(stderr, "npycmp: %s\n", err);
            return 2;
        }
        if (!kgen_io_dtype_equal(ref.dtype, out.dtype) || ref.ndim != out.ndim ||
            memcmp(ref.shape, out.shape, sizeof(int64_t) * (size_t)ref.ndim)) {
            fprintf(stderr, "npycmp: type mismatch: reference %s, output %s\n",
                    kgen_io_format_type(b1, sizeof b1, ref.dtype, ref.ndim, ref.shape),
                    kgen_io_format_type(b2, sizeof b2, out.dtype, out.ndim, out.shape));
            return 1;
        }
        n = ref.count;
    }

    for (i = 0; i < n; i++) {
        double r = elem(&ref, i), o = text ? text[i] : elem(&out, i);
        double d = fabs(o - r);
        int ok = (r != r || o != o) ? (r != r && o != o) : d <= atol + rtol * fabs(r);
        if (r == r && o == o) {
            if (d > max_abs)
                max_abs = d;
            if (fabs(r) > 0 && d / fabs(r) > max_rel)
                max_rel = d / fabs(r);
        }
        if (!ok) {
            if (bad < 5)
                fprintf(stderr, "npycmp: element %lu: got %.8g, expected %.8g\n", (unsigned long)i,
                        o, r);
            bad++;
        }
    }
    printf("%lu elements, max_abs_err=%.3g max_rel_err=%.3g, %lu outside rtol=%g atol=%g\n",
           (unsigned long)n, max_abs, max_rel, (unsigned long)bad, rtol, atol);
    free(text);
    kgen_io_free(&ref);
    kgen_io_free(&out);
    return bad ? 1 : 0;
}
