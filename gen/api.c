/* api.c - the driver behind the command line and libkgen: tell an ONNX model from a .kg
 * program by its content, then read, parse, schedule, lower, emit. Everything is built in
 * one arena that goes at once. */
#include "gen.h"
#include "../onnx/onnx.h"
#include "../emit/emit.h"

#include <ctype.h>
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

const char *gen_name_from_path(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strcspn(base, ".");
    char *name = ir_alloc(n + 3);
    size_t k = 0;
    if (n == 0 || isdigit((unsigned char)base[0]))
        name[k++] = 'k', name[k++] = '_';
    for (size_t i = 0; i < n; i++)
        name[k++] = isalnum((unsigned char)base[i]) ? base[i] : '_';
    name[k] = 0;
    return name;
}

static int valid_name(const char *s)
{
    if (!s[0] || isdigit((unsigned char)s[0]))
        return 0;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_')
            return 0;
    return 1;
}

/* GenOptions.weights_in_file travels into EmModel as it is */
_Static_assert(EM_WEIGHTS_AUTO == 0 && EM_WEIGHTS_FILE == 1 && EM_WEIGHTS_EMBED == 2 && EM_WEIGHTS_INCBIN == 3,
               "--weights modes: gen/main.c's table follows EM_WEIGHTS_*");

/* Does the file read as an ONNX ModelProto at its top level? Every field must be
 * well-formed protobuf, and those numbered below 16 (one-byte tags: ASCII bytes, so text
 * lands there) ModelProto fields of their wire type, unless the file holds control bytes
 * (then the loader judges the fields). Text rarely gets past its first byte: '#', 'k',
 * 'o', 's' are groups or invalid wire types, 'i' is a fixed64 field 13 that ModelProto does
 * not have. Returns 1, or 0 with the reason in why (no file name, "... at byte N"). */
static int is_onnx_model(const char *text, size_t len, int binary, char *why, size_t whylen)
{
    /* ModelProto's fields 1 to 15 and their wire types; -1: none */
    static const char *const name[16] = {NULL, "ir_version", "producer_name", "producer_version", "domain",
                                         "model_version", "doc_string", "graph", "opset_import", [14] = "metadata_props"};
    static const int8_t wire[16] = {-1, ONNX_PB_VARINT, ONNX_PB_LEN, ONNX_PB_LEN, ONNX_PB_LEN, ONNX_PB_VARINT,
                                    ONNX_PB_LEN, ONNX_PB_LEN, ONNX_PB_LEN, -1, -1, -1, -1, -1, ONNX_PB_LEN, -1};
    char err[512];
    OnnxPb p = {(const uint8_t *)text, 0, len, 0, NULL, "", err, sizeof err};
    OnnxPbField f;
    int r, nfields = 0;
    while ((r = onnx_pb_next(&p, &f)) == 1) {
        if (f.num < 16 && wire[f.num] != f.wire && !binary) {
            if (wire[f.num] < 0)
                snprintf(why, whylen, "a ModelProto has no field %u (%s) at byte %zu", f.num,
                         onnx_pb_wire_name(f.wire), f.at);
            else
                snprintf(why, whylen, "field %u (%s) is %s, not %s, at byte %zu", f.num, name[f.num],
                         onnx_pb_wire_name(wire[f.num]), onnx_pb_wire_name(f.wire), f.at);
            return 0;
        }
        nfields++;
    }
    if (r < 0) {
        snprintf(why, whylen, "%s", err + 2);   /* after the empty file name's ": " */
        return 0;
    }
    if (!nfields) {
        snprintf(why, whylen, "the file is empty");
        return 0;
    }
    return 1;
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

/* --input-shape NAME=D0,D1,... ("NAME=" for a scalar) */
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
        if (parse_dim(prog, "--input-shape", arg, p, n, &out->dims[out->ndim++]))
            return -1;
        if (!p[n])
            break;
        p += n + 1;
    }
    return 0;
}

/* --dim SYMBOL=N */
static int parse_dim_value(const char *prog, const char *arg, OnnxDimValue *out)
{
    const char *v;
    char *name = split_last_eq(arg, &v);
    if (!name) {
        fprintf(stderr, "%s: error: --dim %s: expected SYMBOL=N\n", prog, arg);
        return -1;
    }
    out->symbol = name;
    return parse_dim(prog, "--dim", arg, v, strlen(v), &out->value);
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

int gen_compile(const GenOptions *opt)
{
    char *text;
    size_t len;
    if (gen_read_file(opt->input, opt->max_file_bytes, &text, &len))
        return -1;
    /* ONNX or .kg by the content; a name ending in .onnx never makes a .kg program */
    size_t n = strlen(opt->input), nul = strlen(text);
    int named_onnx = n > 5 && !strcmp(opt->input + n - 5, ".onnx"), binary = 0;
    for (size_t i = 0; i < len && !binary; i++)   /* control bytes but whitespace: not text */
        binary = ((unsigned char)text[i] < 0x20 && !strchr("\t\n\v\f\r", text[i])) || text[i] == 0x7f;
    char why[640];
    if (is_onnx_model(text, len, binary, why, sizeof why)) {
        free(text);
        return gen_compile_onnx(opt);
    }
    if (nul != len) {
        free(text);
        return ir_fail("%s: not an ONNX model (%s), nor a .kg program (a NUL byte at byte %zu)", opt->input, why, nul);
    }
    if (named_onnx) {
        free(text);
        return ir_fail("%s: not an ONNX model (%s)", opt->input, why);
    }
    Arena *arena = ir_arena_new();
    ir_arena_set(arena);
    int rc = -1;
    KgModule mod = {0};
    Define defs[GEN_MAX_DEFINES];
    memcpy(defs, opt->defines, sizeof defs[0] * (size_t)opt->ndefines);
    if (gen_parse_kg(opt->input, text, defs, opt->ndefines, opt->no_schedule ? "none" : opt->target, &mod))
        goto done;
    /* -mattr, -mcpu: the section's vector loops of sum reductions become SIMD micro-kernel
     * calls where they match (a .kg's own tensorize lines apply on any target) */
    mod.sched->simd_lanes = opt->no_schedule ? 0 : target_simd_lanes(&opt->tgt);
    if (sch_tensorize_auto(mod.sched)) {
        ir_fail("%s: tensorize: %s", opt->input, ir_errmsg());
        goto done;
    }
    if (!mod.scheduled && !opt->no_schedule && target_is_gpu(&opt->tgt)) {
        /* no schedule section for this GPU: one thread per output element */
        if (sch_default_gpu(mod.sched, opt->tgt.max_threads < 256 ? opt->tgt.max_threads : 256)) {
            ir_fail("%s: default GPU schedule: %s", opt->input, ir_errmsg());
            goto done;
        }
        mod.default_gpu = 1;
    }
    const char *name = opt->name ? opt->name : mod.kernel_name ? mod.kernel_name : gen_name_from_path(opt->input);
    if (!valid_name(name)) {
        ir_fail("kernel name '%s' is not a C identifier", name);
        goto done;
    }
    FILE *dump = opt->dump_out ? opt->dump_out : stdout;
    if (opt->dump && !strcmp(opt->dump, "tir"))
        ir_print_program(dump, mod.prog);
    if (opt->dump && !strcmp(opt->dump, "schedule"))
        sch_print(dump, mod.sched);
    Kernel *k = ir_lower(mod.sched, name);
    if (!k) {
        ir_fail("%s: cannot lower the schedule: %s", opt->input, ir_errmsg());
        goto done;
    }
    if (mod.default_gpu)
        ir_vec_push(&k->notes, ir_fmt("schedule: kgen's default GPU schedule (no section for %s)", opt->target), 1 << 20, "notes");
    else if (!mod.scheduled)
        ir_vec_push(&k->notes, opt->no_schedule ? "schedule: none (--no-schedule)" : ir_fmt("schedule: none for target %s", opt->target), 1 << 20, "notes");
    for (int i = 0; i < mod.schedule_lines.n; i++)
        ir_vec_push(&k->notes, ir_fmt("  %s", (char *)mod.schedule_lines.items[i]), 1 << 20, "notes");
    if (mod.sched->simd_lanes)
        ir_vec_push(&k->notes, ir_fmt("tensorize: for %s, the vector loops of sum reductions call kgen_ukernels.h "
                                      "where they match", target_simd_name(&opt->tgt)), 1 << 20, "notes");
    if (opt->dump && !strcmp(opt->dump, "lower"))
        ir_print_kernel(dump, k);
    if (opt->outdir) {
        OutSet o = {0};
        const char *slash = strrchr(opt->input, '/');
        const char *src = slash ? slash + 1 : opt->input;
        if (em_kernel_files(&o, k, name, src, &opt->tgt) || em_outset_write(&o, opt->outdir)) {
            em_outset_free(&o);
            goto done;
        }
        em_outset_free(&o);
    }
    rc = 0;
done:
    free(text);
    ir_arena_free(arena);
    return rc;
}
