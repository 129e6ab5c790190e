/* api.c - what the command line and libkgen share besides the driver (driver.c):
 * reading an input file under the size limit, and the options that give graph inputs
 * shapes and values (--input-shape, --dim, --bind). */
#include "gen.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int gen_read_file(const char *path, int64_t max_bytes, char **text, size_t *len)
{
    size_t max = (size_t)(max_bytes > 0 ? max_bytes : GEN_MAX_FILE_BYTES);
    FILE *f = fopen(path, "rb");
    if (!f)
        return ir_fail("%s: cannot open: %s", path, strerror(errno));
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    if (!buf)
        ir_die("out of memory");
    for (;;) {
        if (n > max) {
            free(buf);
            fclose(f);
            if (max % ((size_t)1 << 20) == 0)
                return ir_fail("%s: larger than the limit of %zu MiB (--max-file-mb)", path, max >> 20);
            return ir_fail("%s: larger than the limit of %zu bytes (--max-file-mb)", path, max);
        }
        if (cap - n < 4096) {
            cap *= 2;
            char *nb = realloc(buf, cap);
            if (!nb)
                ir_die("out of memory");
            buf = nb;
        }
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0)
            break;
    }
    int err = ferror(f);
    fclose(f);
    if (err) {
        free(buf);
        return ir_fail("%s: read error", path);
    }
    buf[n] = 0;
    *text = buf;
    *len = n;
    return 0;
}

/* The name of NAME=VALUE (split on the last '=': ONNX names may hold one); NULL if none. */
static char *split_last_eq(const char *arg, const char **value)
{
    const char *eq = strrchr(arg, '=');
    if (!eq || eq == arg)
        return NULL;
    *value = eq + 1;
    char *name = malloc((size_t)(eq - arg) + 1);
    if (!name)
        return NULL;
    memcpy(name, arg, (size_t)(eq - arg));
    name[eq - arg] = 0;
    return name;
}

/* A dimension of --input-shape or --dim: a whole number from 1; 0, or -1 after a message. */
static int parse_dim(const char *prog, const char *opt, const char *arg, const char *s, size_t n, int64_t *out)
{
    char buf[32];
    char *end;
    long long v = -1;
    if (n > 0 && n < sizeof buf) {
        memcpy(buf, s, n);
        buf[n] = 0;
        v = strtoll(buf, &end, 10);
        if (*end || buf[0] == '-' || buf[0] == '+')
            v = -1;
    }
    if (v < 1 || v > GEN_MAX_ELEMS) {
        fprintf(stderr, "%s: error: %s %s: '%.*s' is not a dimension (a whole number from 1 to %lld)\n", prog, opt, arg,
                (int)n, s, (long long)GEN_MAX_ELEMS);
        return -1;
    }
    *out = v;
    return 0;
}

/* A dim or a range LO..HI of dims (LO < HI): *lo = *hi for a single one. */
static int parse_dim_range(const char *prog, const char *opt, const char *arg, const char *s, size_t n, int64_t *lo,
                           int64_t *hi)
{
    const char *dots = NULL;
    for (size_t i = 0; i + 1 < n && !dots; i++)
        if (s[i] == '.' && s[i + 1] == '.')
            dots = s + i;
    if (!dots) {
        if (parse_dim(prog, opt, arg, s, n, hi))
            return -1;
        *lo = *hi;
        return 0;
    }
    size_t a = (size_t)(dots - s);
    if (parse_dim(prog, opt, arg, s, a, lo) || parse_dim(prog, opt, arg, dots + 2, n - a - 2, hi))
        return -1;
    if (*lo >= *hi) {
        fprintf(stderr, "%s: error: %s %s: the range '%.*s' is empty or one value (give LO..HI with LO < HI, or N)\n",
                prog, opt, arg, (int)n, s);
        return -1;
    }
    return 0;
}

/* --input-shape NAME=D0,D1,... ("NAME=" for a scalar; a dim may be a range LO..HI) */
static int parse_input_shape(const char *prog, const char *arg, OnnxInputShape *out)
{
    const char *v;
    char *name = split_last_eq(arg, &v);
    if (!name) {
        fprintf(stderr, "%s: error: --input-shape %s: expected NAME=D0,D1,...\n", prog, arg);
        return -1;
    }
    out->name = name;
    out->ndim = 0;
    for (const char *p = v; *v;) {   /* "" is a scalar */
        size_t n = strcspn(p, ",");
        if (out->ndim == KG_MAX_DIMS) {
            fprintf(stderr, "%s: error: --input-shape %s: more than %d dimensions\n", prog, arg, KG_MAX_DIMS);
            return -1;
        }
        if (parse_dim_range(prog, "--input-shape", arg, p, n, &out->lo[out->ndim], &out->dims[out->ndim]))
            return -1;
        out->ndim++;
        if (!p[n])
            break;
        p += n + 1;
    }
    return 0;
}

/* --dim SYMBOL=N or SYMBOL=LO..HI */
static int parse_dim_value(const char *prog, const char *arg, OnnxDimValue *out)
{
    const char *v;
    char *name = split_last_eq(arg, &v);
    if (!name) {
        fprintf(stderr, "%s: error: --dim %s: expected SYMBOL=N or SYMBOL=LO..HI\n", prog, arg);
        return -1;
    }
    out->symbol = name;
    return parse_dim_range(prog, "--dim", arg, v, strlen(v), &out->lo, &out->value);
}

int gen_shape_option(GenOptions *opt, int argc, char **argv, int *i, const char *prog)
{
    const char *a = argv[*i];
    size_t n = strcspn(a, "=");
    int which = n == 13 && !strncmp(a, "--input-shape", 13) ? 0 : n == 5 && !strncmp(a, "--dim", 5) ? 1
                : n == 6 && !strncmp(a, "--bind", 6)                                               ? 2
                                                                                                   : -1;
    if (which < 0)
        return 0;
    const char *v = a[n] ? a + n + 1 : *i + 1 < argc ? argv[++*i] : NULL;
    if (!v) {
        fprintf(stderr, "%s: error: %s needs a value\n", prog, a);
        return -1;
    }
    int *count = which == 0 ? &opt->nshapes : which == 1 ? &opt->ndims : &opt->nbinds;
    if (*count == GEN_MAX_SHAPE_ARGS) {
        fprintf(stderr, "%s: error: more than %d %.*s options\n", prog, GEN_MAX_SHAPE_ARGS, (int)n, a);
        return -1;
    }
    if (which == 0 ? parse_input_shape(prog, v, &opt->shapes[*count])
        : which == 1 ? parse_dim_value(prog, v, &opt->dims[*count])
                     : 0)
        return -1;
    if (which == 2)
        opt->binds[*count] = v;
    ++*count;
    return 1;
}

void gen_shape_options_free(GenOptions *opt)
{
    for (int i = 0; i < opt->nshapes; i++)
        free((char *)opt->shapes[i].name);
    for (int i = 0; i < opt->ndims; i++)
        free((char *)opt->dims[i].symbol);
    opt->nshapes = opt->ndims = 0;
}
