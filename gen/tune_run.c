/* tune_run.c - `kgen tune`: builds each candidate the search (schedule/tune.c) proposes
 * with the user's compiler, runs it (locally or behind a runner command), checks its
 * outputs against the untuned build and logs its median time; and `--tuning-log`, which
 * applies the best record of a workload.
 *
 * A workload is one file with the values of its non-tunable -D params, keyed
 * "c/kg:NAME:HASH[:M=512,...]" or "c/onnx@sV:NAME:HASH" (HASH: FNV-1a of the file's bytes,
 * so an edited file starts afresh; V: SCH_DEFAULT_VERSION, so records of an older default
 * schedule, whose knobs built other code, stop applying). The knobs are, for a .kg file, the params its
 * `tune NAME in {...}` lines declare (minus those given with -D); for an ONNX model, the
 * register tile of the default schedule (SchTile), one choice for all its reductions.
 *
 * Each candidate goes to WORK/cand/ (the untuned reference to WORK/ref/) as kernel
 * `cand`, and WORK/harness.c runs it through cand_tensors(): deterministic inputs, one
 * checked run, then RUNS timed runs, each followed by one of the untuned build (linked in
 * from WORK/refk/ as kernel `ref`); it prints "median_ms=...", "ref_ms=..." and, on a
 * mismatch with the reference's outputs, "wrong: ..." (see harness_body below). Trials
 * rank by median_ms / ref_ms: a busy machine slows both alike.
 */
#include "gen.h"
#include "../emit/cfamily.h"

#include <stdlib.h>
#include <string.h>

#define MAX_ARGS 64
#define CMD_MAX 16384

typedef struct {
    char name[64];
    DType dtype;
    int ndim;
    int64_t shape[KG_MAX_DIMS];
} ArgInfo;

typedef struct {
    int onnx;
    char key[1024];
    SchSpace space;
    SchConfig base;              /* the untuned point */
    char knob_names[SCH_TUNE_MAX_KNOBS][64];
    ArgInfo args[MAX_ARGS];      /* .kg: the kernel's parameters, inputs then outputs */
    int nargs, ninputs;
} Workload;

static uint64_t fnv1a(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
    return h;
}

static int is_onnx(const char *path)
{
    size_t n = strlen(path);
    return n > 5 && !strcmp(path + n - 5, ".onnx");
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const Define *)a)->name, ((const Define *)b)->name);
}

static void add_knob(Workload *w, const char *name, const int64_t *values, int n, int64_t base)
{
    SchKnob *k = &w->space.knobs[w->space.n];
    snprintf(w->knob_names[w->space.n], sizeof w->knob_names[0], "%s", name);
    k->name = w->knob_names[w->space.n];
    k->n = n;
    memcpy(k->values, values, sizeof *values * (size_t)n);
    w->base.v[w->space.n] = base;
    w->space.n++;
}

/* The ONNX knobs: SchTile's fields, and the layout of 2-D convs (--layout: 0 NCHW, 8 or
 * 16 NCHWc; a model without convs ignores it); `blocks` last, so that records written
 * before it existed read the same (a record without it gets the default). */
static void onnx_space(Workload *w, const Target *t)
{
    static const int64_t rows[] = {1, 2, 4, 6, 8, 12, 16}, cols[] = {4, 8, 16, 32, 64}, bits[] = {0, 1};
    static const int64_t layouts[] = {0, 8, 16}, blocks[] = {1, 2, 4};
    add_knob(w, "rows", rows, 7, sch_tile_default.rows);
    add_knob(w, "cols", cols, 5, sch_tile_default.cols);
    add_knob(w, "vectorize", bits, 2, sch_tile_default.vectorize);
    add_knob(w, "unroll", bits, 2, sch_tile_default.unroll);
    add_knob(w, "k_outer", bits, 2, sch_tile_default.k_outer);
    /* what --layout=auto picks for a model with convs: the target's tiles' lanes, 16 or 8 */
    add_knob(w, "layout", layouts, 3, target_simd_lanes(t) == 16 ? 16 : 8);
    add_knob(w, "blocks", blocks, 3, sch_tile_default.blocks);
}

static int defined(const GenOptions *opt, const char *name)
{
    for (int i = 0; i < opt->ndefines; i++)
        if (!strcmp(opt->defines[i].name, name))
            return 1;
    return 0;
}

/* The whole file, NUL-terminated (the parser's own limits apply when it reads it). */
static int read_all(const char *path, char **text, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return ir_fail("%s: cannot open", path);
    size_t cap = 1 << 16, n = 0, got;
    char *buf = malloc(cap);
    while (buf && (got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (cap - n < 4096) {
            char *nb = realloc(buf, cap * 2);
            if (!nb)
                free(buf);
            buf = nb;
            cap *= 2;
        }
    }
    int bad = ferror(f);
    fclose(f);
    if (!buf)
        ir_die("out of memory");
    if (bad) {
        free(buf);
        return ir_fail("%s: read error", path);
    }
    buf[n] = 0;
    *text = buf;
    *len = n;
    return 0;
}

/* Read opt->input: its workload key, knobs and (.kg) parameters. */
static int load_workload(const GenOptions *opt, Workload *w)
{
    memset(w, 0, sizeof *w);
    char *text = NULL;
    size_t len = 0;
    if (read_all(opt->input, &text, &len))
        return -1;
    uint64_t h = fnv1a(text, len);
    /* a model's shapes and bound inputs make another workload: mix them into the hash */
    for (int i = 0; i < opt->nshapes; i++) {
        h ^= fnv1a(opt->shapes[i].name, strlen(opt->shapes[i].name)) * 31;
        h ^= fnv1a((const char *)opt->shapes[i].dims, sizeof(int64_t) * (size_t)opt->shapes[i].ndim) * 37;
    }
    for (int i = 0; i < opt->ndims; i++)
        h ^= (fnv1a(opt->dims[i].symbol, strlen(opt->dims[i].symbol)) + (uint64_t)opt->dims[i].value) * 41;
    for (int i = 0; i < opt->nbinds; i++)
        h ^= fnv1a(opt->binds[i], strlen(opt->binds[i])) * 43;
    w->onnx = is_onnx(opt->input);
    int n = w->onnx ? snprintf(w->key, sizeof w->key, "c/onnx@s%d:%s:%016llx", SCH_DEFAULT_VERSION,
                               base_name(opt->input), (unsigned long long)h)
                    : snprintf(w->key, sizeof w->key, "c/kg:%s:%016llx", base_name(opt->input), (unsigned long long)h);
    for (char *c = w->key; *c; c++)
        if (*c == '\t' || *c == '\n' || *c == '\r')
            *c = '_';
    if (w->onnx) {
        free(text);
        onnx_space(w, &opt->tgt);
        return 0;
    }
    Arena *arena = ir_arena_new();
    ir_arena_set(arena);
    int rc = -1;
    KgModule mod;
    Define defs[GEN_MAX_DEFINES];
    memcpy(defs, opt->defines, sizeof defs[0] * (size_t)opt->ndefines);
    if (gen_parse_kg(opt->input, text, defs, opt->ndefines, "c", &mod))
        goto done;
    for (int i = 0; i < mod.tunables.n; i++) {
        GenTunable *tu = mod.tunables.items[i];
        if (defined(opt, tu->name))
            continue;
        if (w->space.n == SCH_TUNE_MAX_KNOBS) {
            ir_fail("%s: more than %d params to tune", opt->input, SCH_TUNE_MAX_KNOBS);
            goto done;
        }
        add_knob(w, tu->name, tu->values, tu->n, tu->value);
    }
    /* the other -D values are part of the workload (the tunable ones are fixed choices) */
    Define sorted[GEN_MAX_DEFINES];
    memcpy(sorted, opt->defines, sizeof sorted[0] * (size_t)opt->ndefines);
    qsort(sorted, (size_t)opt->ndefines, sizeof sorted[0], by_name);
    char sep = ':';
    for (int i = 0; i < opt->ndefines; i++) {
        int tunable = 0;
        for (int k = 0; k < mod.tunables.n; k++)
            tunable |= !strcmp(((GenTunable *)mod.tunables.items[k])->name, sorted[i].name);
        if (tunable || (size_t)n >= sizeof w->key)
            continue;
        n += snprintf(w->key + n, sizeof w->key - (size_t)n, "%c%s=%lld", sep, sorted[i].name,
                      (long long)sorted[i].value);
        sep = ',';
    }
    /* the kernel's parameters: inputs in program order, then outputs */
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < mod.prog->tensors.n; i++) {
            Tensor *t = mod.prog->tensors.items[i];
            if (pass == 0 ? t->kind != T_PLACEHOLDER : !t->is_output)
                continue;
            if (w->nargs == MAX_ARGS) {
                ir_fail("%s: more than %d inputs and outputs to tune", opt->input, MAX_ARGS);
                goto done;
            }
            ArgInfo *a = &w->args[w->nargs++];
            snprintf(a->name, sizeof a->name, "%s", t->name);
            a->dtype = t->dtype;
            a->ndim = t->ndim;
            memcpy(a->shape, t->shape, sizeof(int64_t) * (size_t)t->ndim);
            w->ninputs += pass == 0;
        }
    rc = 0;
done:
    ir_arena_free(arena);
    free(text);
    return rc;
}

/* ---------------------------------------------------------------- building and running */

/* s in single quotes for the shell */
static void shq(char *out, size_t n, const char *s)
{
    size_t k = 0;
    if (n < 3)
        return;
    out[k++] = '\'';
    for (; *s && k + 6 < n; s++) {
        if (*s == '\'') {
            memcpy(out + k, "'\\''", 4);
            k += 4;
        } else {
            out[k++] = *s;
        }
    }
    out[k++] = '\'';
    out[k] = 0;
}

static int write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return ir_fail("cannot write '%s'", path);
    fputs(text, f);
    return fclose(f) ? ir_fail("cannot write '%s'", path) : 0;
}

/* The first line of a file that says something ("error" if one does), for the log. */
static void first_error(const char *path, char *out, size_t n)
{
    out[0] = 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = 0;
        if (!out[0] && line[0])
            snprintf(out, n, "%s", line);
        if (strstr(line, "error") || strstr(line, "wrong:")) {
            snprintf(out, n, "%s", line);
            break;
        }
    }
    fclose(f);
}

static const char harness_body[] =
    "static double now_ms(void)\n"
    "{\n"
    "    struct timespec t;\n"
    "    clock_gettime(CLOCK_MONOTONIC, &t);\n"
    "    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;\n"
    "}\n\n"
    "static int cmp(const void *x, const void *y)\n"
    "{\n"
    "    double a = *(const double *)x, b = *(const double *)y;\n"
    "    return (a > b) - (a < b);\n"
    "}\n\n"
    "static size_t numel(const kgen_value_info *v)\n"
    "{\n"
    "    size_t n = 1;\n"
    "    for (int d = 0; d < v->ndim; d++)\n"
    "        n *= (size_t)v->shape[d];\n"
    "    return n;\n"
    "}\n\n"
    "/* deterministic inputs: floats in [-1, 1), integers 0..3 (safe as indices), bools */\n"
    "static void fill(const kgen_value_info *v, unsigned char *p, unsigned seed)\n"
    "{\n"
    "    unsigned s = seed * 2654435761u + 12345u;\n"
    "    size_t n = numel(v);\n"
    "    for (size_t i = 0; i < n; i++) {\n"
    "        s = s * 1664525u + 1013904223u;\n"
    "        double x = (double)(s >> 8) / 8388608.0 - 1.0;\n"
    "        unsigned small = (s >> 24) % 4;\n"
    "        if (v->dtype.code == KGEN_DTYPE_FLOAT && v->dtype.bits == 32)\n"
    "            ((float *)p)[i] = (float)x;\n"
    "        else if (v->dtype.code == KGEN_DTYPE_FLOAT && v->dtype.bits == 64)\n"
    "            ((double *)p)[i] = x;\n"
    "        else if (v->dtype.code == KGEN_DTYPE_BOOL)\n"
    "            p[i] = (unsigned char)(small & 1);\n"
    "        else if (v->dtype.code == KGEN_DTYPE_INT || v->dtype.code == KGEN_DTYPE_UINT)\n"
    "            p[i * (v->dtype.bits / 8)] = (unsigned char)small;   /* little-endian */\n"
    "    }\n"
    "}\n\n"
    "/* element i of a float output, or -1 for another type (compared bytewise) */\n"
    "static int as_double(const kgen_value_info *v, const unsigned char *p, size_t i, double *out)\n"
    "{\n"
    "    if (v->dtype.code == KGEN_DTYPE_FLOAT && v->dtype.bits == 32)\n"
    "        *out = ((const float *)p)[i];\n"
    "    else if (v->dtype.code == KGEN_DTYPE_FLOAT && v->dtype.bits == 64)\n"
    "        *out = ((const double *)p)[i];\n"
    "    else\n"
    "        return -1;\n"
    "    return 0;\n"
    "}\n\n"
    "int main(int argc, char **argv)\n"
    "{\n"
    "    if (argc < 3) {\n"
    "        fprintf(stderr, \"usage: %s RUNS OUT.bin|- [REF.bin]\\n\", argv[0]);\n"
    "        return 2;\n"
    "    }\n"
    "    int runs = atoi(argv[1]);\n"
    "    kgen_tensor t[NARGS > 0 ? NARGS : 1], *args[NARGS > 0 ? NARGS : 1];\n"
    "    size_t bytes[NARGS > 0 ? NARGS : 1];\n"
    "    set_info();\n"
    "    for (int i = 0; i < NARGS; i++) {\n"
    "        bytes[i] = numel(&info[i]) * (info[i].dtype.bits / 8);\n"
    "        unsigned char *p = calloc(bytes[i] + 1, 1);\n"
    "        if (!p) {\n"
    "            fprintf(stderr, \"error: out of memory\\n\");\n"
    "            return 2;\n"
    "        }\n"
    "        if (i < NIN)\n"
    "            fill(&info[i], p, (unsigned)i + 1);\n"
    "        memset(&t[i], 0, sizeof t[i]);\n"
    "        t[i].data = p;\n"
    "        t[i].device.device_type = KGEN_DEVICE_CPU;\n"
    "        t[i].ndim = info[i].ndim;\n"
    "        t[i].dtype = info[i].dtype;\n"
    "        t[i].shape = info[i].shape;\n"
    "        args[i] = &t[i];\n"
    "    }\n"
    "    unsigned char *raw = malloc((size_t)WS_BYTES + 128);\n"
    "    void *ws = raw ? (void *)(raw + (64 - (size_t)((uintptr_t)raw % 64))) : NULL;\n"
    "    int status = RUN(args, NARGS, ws);\n"
    "    if (status != KGEN_OK) {\n"
    "        fprintf(stderr, \"error: status %d\\n\", status);\n"
    "        return 2;\n"
    "    }\n"
    "    if (argc > 3) {\n"
    "        FILE *f = fopen(argv[3], \"rb\");\n"
    "        if (!f) {\n"
    "            fprintf(stderr, \"error: cannot read %s\\n\", argv[3]);\n"
    "            return 2;\n"
    "        }\n"
    "        for (int i = NIN; i < NARGS; i++) {\n"
    "            unsigned char *r = malloc(bytes[i] + 1);\n"
    "            const unsigned char *c = t[i].data;\n"
    "            if (!r || fread(r, 1, bytes[i], f) != bytes[i]) {\n"
    "                fprintf(stderr, \"error: short reference\\n\");\n"
    "                return 2;\n"
    "            }\n"
    "            size_t n = numel(&info[i]);\n"
    "            double maxabs = 0, a, b;\n"
    "            for (size_t e = 0; e < n && as_double(&info[i], r, e, &a) == 0; e++)\n"
    "                maxabs = fabs(a) > maxabs ? fabs(a) : maxabs;\n"
    "            for (size_t e = 0; e < n; e++) {\n"
    "                int bad;\n"
    "                if (as_double(&info[i], r, e, &a) == 0) {\n"
    "                    as_double(&info[i], c, e, &b);\n"
    "                    bad = !(fabs(a - b) <= 1e-3 * fabs(a) + 1e-4 * maxabs + 1e-6) && !(a != a && b != b);\n"
    "                } else {\n"
    "                    size_t w = info[i].dtype.bits / 8;\n"
    "                    bad = memcmp(r + e * w, c + e * w, w) != 0;\n"
    "                }\n"
    "                if (bad) {\n"
    "                    printf(\"wrong: output %s element %lu differs from the untuned build\\n\", info[i].name,\n"
    "                           (unsigned long)e);\n"
    "                    return 3;\n"
    "                }\n"
    "            }\n"
    "            free(r);\n"
    "        }\n"
    "        fclose(f);\n"
    "    }\n"
    "    if (strcmp(argv[2], \"-\")) {\n"
    "        FILE *f = fopen(argv[2], \"wb\");\n"
    "        for (int i = NIN; f && i < NARGS; i++)\n"
    "            fwrite(t[i].data, 1, bytes[i], f);\n"
    "        if (!f || fclose(f)) {\n"
    "            fprintf(stderr, \"error: cannot write %s\\n\", argv[2]);\n"
    "            return 2;\n"
    "        }\n"
    "    }\n"
    "    /* with the untuned build linked in (WITH_REF), the two run in turn, so that a busy\n"
    "     * machine slows both alike and their ratio holds */\n"
    "    double *ms = malloc(sizeof *ms * (size_t)(runs > 0 ? runs : 1) * 2), *rms = ms ? ms + (runs > 0 ? runs : 1) : NULL;\n"
    "#ifdef WITH_REF\n"
    "    unsigned char *rraw = malloc((size_t)REF_WS + 128);\n"
    "    void *rws = rraw ? (void *)(rraw + (64 - (size_t)((uintptr_t)rraw % 64))) : NULL;\n"
    "    ref_tensors(args, NARGS, rws);\n"
    "#endif\n"
    "    for (int r = 0; r < runs && ms; r++) {\n"
    "        double t0 = now_ms();\n"
    "        RUN(args, NARGS, ws);\n"
    "        ms[r] = now_ms() - t0;\n"
    "#ifdef WITH_REF\n"
    "        t0 = now_ms();\n"
    "        ref_tensors(args, NARGS, rws);\n"
    "        rms[r] = now_ms() - t0;\n"
    "#endif\n"
    "    }\n"
    "    if (runs > 0 && ms) {\n"
    "        qsort(ms, (size_t)runs, sizeof *ms, cmp);\n"
    "        printf(\"median_ms=%.6f min_ms=%.6f runs=%d\\n\", runs % 2 ? ms[runs / 2] : (ms[runs / 2 - 1] + ms[runs / 2]) / 2,\n"
    "               ms[0], runs);\n"
    "#ifdef WITH_REF\n"
    "        qsort(rms, (size_t)runs, sizeof *rms, cmp);\n"
    "        printf(\"ref_ms=%.6f\\n\", runs % 2 ? rms[runs / 2] : (rms[runs / 2 - 1] + rms[runs / 2]) / 2);\n"
    "#endif\n"
    "    }\n"
    "    return 0;\n"
    "}\n";

/* WORK/harness.c for the workload: the parameter table, then harness_body. */
static int write_harness(const Workload *w, const char *path)
{
    size_t cap = 1 << 16, n = 0;
    char *s = malloc(cap);
    if (!s)
        ir_die("out of memory");
#define PUT(...) (n += (size_t)snprintf(s + n, n < cap ? cap - n : 0, __VA_ARGS__))
    PUT("/* harness.c - written by kgen tune: times one candidate and checks its outputs. */\n"
        "#define _POSIX_C_SOURCE 199309L\n#include <math.h>\n#include <stdio.h>\n#include <stdlib.h>\n"
        "#include <string.h>\n#include <time.h>\n\n#include \"cand.h\"\n#ifdef WITH_REF\n#include \"ref.h\"\n#endif\n\n");
    if (w->onnx) {
        PUT("#define NIN CAND_NUM_INPUTS\n#define NARGS (CAND_NUM_INPUTS + CAND_NUM_OUTPUTS)\n"
            "#define RUN cand_tensors\n#define WS_BYTES CAND_ARENA_BYTES\n#define REF_WS REF_ARENA_BYTES\n"
            "static kgen_value_info info[NARGS];\n\n"
            "static void set_info(void)\n{\n"
            "#if CAND_NUM_INPUTS > 0\n"
            "    for (int i = 0; i < CAND_NUM_INPUTS; i++)\n        info[i] = cand_input_info[i];\n"
            "#endif\n"
            "    for (int i = 0; i < CAND_NUM_OUTPUTS; i++)\n        info[CAND_NUM_INPUTS + i] = cand_output_info[i];\n"
            "}\n\n");
    } else {
        PUT("#define NIN %d\n#define NARGS %d\n#define RUN cand_tensors\n#define WS_BYTES CAND_WORKSPACE_BYTES\n"
            "#define REF_WS REF_WORKSPACE_BYTES\n"
            "static kgen_value_info info[NARGS] = {\n",
            w->ninputs, w->nargs);
        for (int i = 0; i < w->nargs; i++) {
            const ArgInfo *a = &w->args[i];
            PUT("    {\"%s\", {%s, %d, 1}, %d, {", a->name, em_c_dlpack_code(a->dtype), ir_dtype_bits(a->dtype),
                a->ndim);
            for (int d = 0; d < a->ndim; d++)
                PUT("%s%lld", d ? ", " : "", (long long)a->shape[d]);
            PUT("}, %d},\n", i);
        }
        PUT("};\n\nstatic void set_info(void)\n{\n}\n\n");
    }
    PUT("%s", harness_body);
#undef PUT
    int rc = n >= cap ? ir_fail("the harness is too long") : write_text(path, s);
    free(s);
    return rc;
}

typedef struct {
    const char *cc, *cflags, *runner, *work;
    int runs;
    int with_ref;                /* WORK/refk/ holds the untuned build as objects (kernel `ref`) */
} Tools;

/* Generate the point c as kernel `name` into path. */
static int generate(const GenOptions *base, const Workload *w, const SchConfig *c, const char *path, const char *name)
{
    GenOptions opt = *base;
    SchTile tile = sch_tile_default;
    opt.outdir = path;
    opt.name = name;
    opt.with_main = 0;
    opt.dump = NULL;
    opt.report = 0;
    if (w->onnx) {
        tile.rows = (int)c->v[0];
        tile.cols = (int)c->v[1];
        tile.vectorize = (int)c->v[2];
        tile.unroll = (int)c->v[3];
        tile.k_outer = (int)c->v[4];
        tile.blocks = (int)c->v[6];
        opt.tile = &tile;
        opt.layout_block = c->v[5] ? (int)c->v[5] : GEN_LAYOUT_NCHW;
    } else {
        for (int k = 0; k < w->space.n && opt.ndefines < GEN_MAX_DEFINES; k++) {
            opt.defines[opt.ndefines].name = w->space.knobs[k].name;
            opt.defines[opt.ndefines].value = c->v[k];
            opt.ndefines++;
        }
    }
    ir_clear_error();
    return gen_compile(&opt);
}

/* The untuned build as objects of kernel `ref` in WORK/refk, linked into every candidate. */
static int build_ref_objects(const GenOptions *base, const Workload *w, const Tools *tl)
{
    char path[4096], q[4096], cmd[CMD_MAX];
    snprintf(path, sizeof path, "%s/refk", tl->work);
    if (generate(base, w, &w->base, path, "ref"))
        return -1;
    shq(q, sizeof q, path);
    if (snprintf(cmd, sizeof cmd, "for f in %s/*.c; do %s %s -I%s -c \"$f\" -o \"${f%%.c}.o\" || exit 1; done > %s/cc.log 2>&1",
                 q, tl->cc, tl->cflags, q, q) >= (int)sizeof cmd || system(cmd) != 0)
        return ir_fail("the untuned build does not compile (see %s/cc.log)", path);
    return 0;
}

static int run_built(const Tools *tl, const char *path, const char *out, const char *ref, double *ms, double *rel,
                     char *err, size_t nerr);

/* Generate, compile and run the point c into WORK/DIR. Returns 0 with *ms (and, with
 * the reference linked in, *rel: ms over the reference's time) set, or -1 with why in
 * err ("kgen: ...", "compile: ...", "run: ...", "wrong: ..."). */
static int build_and_run(const GenOptions *base, const Workload *w, const Tools *tl, const SchConfig *c,
                         const char *dir, const char *out, const char *ref, double *ms, double *rel, char *err,
                         size_t nerr)
{
    char path[4096], q1[4096], q2[4096], q4[4096], qr[4096], cmd[CMD_MAX];
    snprintf(path, sizeof path, "%s/%s", tl->work, dir);
    /* a stale binary must not stand in for one that failed to build */
    snprintf(cmd, sizeof cmd, "%s/cand.bin", path);
    remove(cmd);
    if (generate(base, w, c, path, "cand")) {
        snprintf(err, nerr, "kgen: %s", ir_errmsg());
        return -1;
    }
    shq(q1, sizeof q1, path);
    snprintf(q4, sizeof q4, "%s/harness.c", tl->work);
    shq(q2, sizeof q2, q4);
    snprintf(q4, sizeof q4, "%s/refk", tl->work);
    shq(qr, sizeof qr, q4);
    if (tl->with_ref && snprintf(q4, sizeof q4, "-DWITH_REF -I%s %s/*.o", qr, qr) >= (int)sizeof q4)
        q4[0] = 0;
    /* each file compiled once per content: candidates that differ only in their kernels
     * share the weights' object (a model's weights as C source take gcc a minute). The
     * key: the compiler and flags, the file and the headers beside it. */
    char objs[4096], qo[4096], key[4096], qk[4096];
    snprintf(objs, sizeof objs, "%s/objs", tl->work);
    shq(qo, sizeof qo, objs);
    snprintf(key, sizeof key, "%s %s", tl->cc, tl->cflags);
    shq(qk, sizeof qk, key);
    if (snprintf(cmd, sizeof cmd,
                 "{ set -e; mkdir -p %s; rm -f %s/*.o; for f in %s/*.c; do "
                 "k=$({ printf '%%s\\n' %s; cat \"$f\" %s/*.h 2>/dev/null; } | cksum | tr ' ' _); "
                 "o=%s/$k.o; [ -f \"$o\" ] || { %s %s -I%s -c \"$f\" -o \"$o.tmp\" && mv \"$o.tmp\" \"$o\"; }; "
                 "cp \"$o\" \"${f%%.c}.o\"; done; "
                 "%s %s -I%s %s/*.o %s %s -lm -o %s/cand.bin; } > %s/cc.log 2>&1",
                 qo, q1, q1, qk, q1, qo, tl->cc, tl->cflags, q1, tl->cc, tl->cflags, q1, q1, q2,
                 tl->with_ref ? q4 : "", q1, q1) >= (int)sizeof cmd) {
        snprintf(err, nerr, "compile: the command is too long");
        return -1;
    }
    if (system(cmd) != 0) {
        snprintf(cmd, sizeof cmd, "%s/cc.log", path);
        char line[200];
        first_error(cmd, line, sizeof line);
        snprintf(err, nerr, "compile: %s", line);
        return -1;
    }
    return run_built(tl, path, out, ref, ms, rel, err, nerr);
}

/* Run WORK/DIR/cand.bin (built): as build_and_run. */
static int run_built(const Tools *tl, const char *path, const char *out, const char *ref, double *ms, double *rel,
                     char *err, size_t nerr)
{
    char q1[4096], q2[4096], q3[4096], cmd[CMD_MAX];
    shq(q1, sizeof q1, path);
    shq(q2, sizeof q2, out);
    q3[0] = 0;
    if (ref)
        shq(q3, sizeof q3, ref);
    snprintf(cmd, sizeof cmd, "%s %s/cand.bin %d %s %s > %s/run.log 2>&1", tl->runner ? tl->runner : "", q1, tl->runs,
             q2, q3, q1);
    int rc = system(cmd);
    snprintf(cmd, sizeof cmd, "%s/run.log", path);
    FILE *f = fopen(cmd, "r");
    char line[512];
    double ref_ms = -1;
    *ms = *rel = -1;
    while (f && fgets(line, sizeof line, f)) {
        if (!strncmp(line, "median_ms=", 10))
            *ms = strtod(line + 10, NULL);
        if (!strncmp(line, "ref_ms=", 7))
            ref_ms = strtod(line + 7, NULL);
    }
    if (*ms >= 0 && ref_ms > 0)
        *rel = *ms / ref_ms;
    if (f)
        fclose(f);
    if (rc != 0 || *ms < 0) {
        first_error(cmd, line, sizeof line);
        if (snprintf(err, nerr, "%s%s", strncmp(line, "wrong:", 6) ? "run: " : "", line[0] ? line : "no timing printed") < 0)
            err[0] = 0;
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- kgen tune */

static void tune_usage(FILE *f)
{
    fputs("usage: kgen tune FILE.kg|MODEL.onnx --log LOG [options]\n"
          "\n"
          "Searches schedules by building and timing them; appends one line per trial to LOG.\n"
          "A .kg file names its knobs with `tune NAME in {V, ...}` lines; an ONNX model's knob\n"
          "is the register tile of the default schedule (rows, cols, vectorize, unroll, k_outer,\n"
          "blocks) and the layout of its 2-D convs (layout=0: NCHW, 8 or 16: NCHWc).\n"
          "\n"
          "options:\n"
          "  --target c        the target (only c for now)\n"
          "  --trials N        candidates to build and time in this run (default 16)\n"
          "  --log LOG         the tuning log, read first (a run resumes) and appended to\n"
          "  --seed S          the search's seed (default 1)\n"
          "  --cc CC           the C compiler (default cc)\n"
          "  --cflags FLAGS    its flags (default \"-O3 -march=native\")\n"
          "  --runner CMD      a command prefix that runs each candidate (qemu-aarch64 -L ...)\n"
          "  --runs N          timed runs per candidate; the median counts (default 10)\n"
          "  --work DIR        where candidates are built (default LOG.work)\n"
          "  -DNAME=VALUE      a param of the file (fixed, and part of the workload)\n"
          "  --input-shape NAME=D0,..., --dim SYMBOL=N, --bind NAME=VALUE|FILE\n"
          "                    (ONNX) a model's shapes and bound inputs, as for kgen (part of\n"
          "                    the workload: give the same ones with --tuning-log)\n"
          "Then: kgen FILE --tuning-log LOG ... generates with the best record.\n",
          f);
}

typedef struct {
    SchTuner *t;
    int bad;
} LoadCtx;

static void visit_load(void *ctx, const char *config, double ms)
{
    LoadCtx *l = ctx;
    SchConfig c;
    if (sch_tune_parse(l->t->space, config, &c) == 0 && !sch_tune_seen(l->t, &c))
        sch_tune_record(l->t, &c, ms);
    else
        l->bad++;
}

static int tune(GenOptions *opt, const Tools *tl, const char *log, int trials, uint64_t seed)
{
    Workload *w = malloc(sizeof *w);
    if (!w)
        ir_die("out of memory");
    int rc = -1;
    SchTuner t;
    sch_tune_init(&t, &w->space, seed);
    char path[4096], ref[4096], cfg[1024], err[512], cmd[CMD_MAX], built[1024];
    snprintf(built, sizeof built, "%s %s", tl->cc, tl->cflags);   /* logged with each trial */
    if (load_workload(opt, w))
        goto done;
    sch_tune_init(&t, &w->space, seed);
    if (w->space.n == 0) {
        ir_fail("%s: nothing to tune: declare the params to search with `tune NAME in {V, ...}` lines", opt->input);
        goto done;
    }
    shq(path, sizeof path, tl->work);
    snprintf(cmd, sizeof cmd, "mkdir -p %s", path);
    if (system(cmd) != 0) {
        ir_fail("cannot create the work directory '%s'", tl->work);
        goto done;
    }
    snprintf(path, sizeof path, "%s/harness.c", tl->work);
    if (write_harness(w, path))
        goto done;
    LoadCtx lc = {&t, 0};
    int before = sch_tune_log_scan(log, w->key, visit_load, &lc);
    fprintf(stderr, "tune: workload %s, %d knobs, %d records in %s\n", w->key, w->space.n, before, log);
    /* the untuned build: the reference for every candidate's outputs, and a trial */
    double ms, rel;
    snprintf(ref, sizeof ref, "%s/ref.bin", tl->work);
    if (build_and_run(opt, w, tl, &w->base, "ref", ref, NULL, &ms, &rel, err, sizeof err)) {
        ir_fail("%s: the untuned build fails: %s (see %s/ref)", opt->input, err, tl->work);
        goto done;
    }
    if (build_ref_objects(opt, w, tl))
        goto done;
    Tools with_ref = *tl;
    with_ref.with_ref = 1;
    tl = &with_ref;
    sch_tune_format(&w->space, &w->base, cfg, sizeof cfg);
    int done_trials = 0;
    if (!sch_tune_seen(&t, &w->base) && trials > 0) {
        sch_tune_record(&t, &w->base, 1.0);
        if (sch_tune_log_append(log, w->key, cfg, ms, 1.0, built, NULL))
            goto done;
        done_trials++;
        fprintf(stderr, "tune: [%d/%d] %s  %.3f ms (untuned)\n", done_trials, trials, cfg, ms);
    }
    for (; done_trials < trials; done_trials++) {
        SchConfig c;
        if (sch_tune_next(&t, &c)) {
            fprintf(stderr, "tune: every point of the space has been tried\n");
            break;
        }
        sch_tune_format(&w->space, &c, cfg, sizeof cfg);
        int bad = build_and_run(opt, w, tl, &c, "cand", "-", ref, &ms, &rel, err, sizeof err);
        const SchTrial *was = sch_tune_best(&t);
        if (!bad && rel >= 0 && was && rel < was->ms * 0.98) {
            /* a new best: measure it again and keep the slower figure, so that one
             * lucky run (the reference disturbed, say) does not take the lead */
            double ms2, rel2;
            char path2[4096];
            snprintf(path2, sizeof path2, "%s/cand", tl->work);
            if (run_built(tl, path2, "-", ref, &ms2, &rel2, err, sizeof err) == 0 && rel2 > rel)
                ms = ms2, rel = rel2;
        }
        sch_tune_record(&t, &c, bad ? -1 : rel >= 0 ? rel : ms);
        if (sch_tune_log_append(log, w->key, cfg, bad ? 0 : ms, rel, built, bad ? err : NULL))
            goto done;
        const SchTrial *b = sch_tune_best(&t);
        char bcfg[1024] = "";
        if (b)
            sch_tune_format(&w->space, &b->cfg, bcfg, sizeof bcfg);
        if (bad)
            fprintf(stderr, "tune: [%d/%d] %s  rejected: %s", done_trials + 1, trials, cfg, err);
        else
            fprintf(stderr, "tune: [%d/%d] %s  %.3f ms, %.2fx the untuned speed", done_trials + 1, trials, cfg, ms,
                    rel > 0 ? 1 / rel : 0.0);
        if (b)
            fprintf(stderr, "  (best %.2fx: %s)\n", b->ms > 0 ? 1 / b->ms : 0.0, bcfg);
        else
            fputc('\n', stderr);
    }
    const SchTrial *b = sch_tune_best(&t);
    if (b) {
        sch_tune_format(&w->space, &b->cfg, cfg, sizeof cfg);
        printf("best %s: %.2fx the untuned speed, %d trials logged\n", cfg, b->ms > 0 ? 1 / b->ms : 0.0, t.n);
    }
    rc = 0;
done:
    sch_tune_free(&t);
    free(w);
    return rc;
}

static int need(int argc, char **argv, int i)
{
    if (i + 1 < argc)
        return 0;
    fprintf(stderr, "kgen tune: error: %s needs a value\n", argv[i]);
    return -1;
}

int gen_tune_main(int argc, char **argv)
{
    GenOptions opt = {0};
    opt.target = "c";
    Tools tl = {"cc", "-O3 -march=native", NULL, NULL, 10, 0};
    const char *log = NULL;
    int trials = 16, rc = 1, n_shape;
    uint64_t seed = 1;
    char work[4096];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            tune_usage(stdout);
            return 0;
        } else if (!strcmp(a, "--target") || !strcmp(a, "--trials") || !strcmp(a, "--log") || !strcmp(a, "--seed") ||
                   !strcmp(a, "--cc") || !strcmp(a, "--cflags") || !strcmp(a, "--runner") || !strcmp(a, "--runs") ||
                   !strcmp(a, "--work")) {
            if (need(argc, argv, i))
                goto out;
            const char *v = argv[++i];
            char *end;
            long long n = strtoll(v, &end, 10);
            int num = *v && !*end;
            if (!strcmp(a, "--target")) {
                if (strcmp(v, "c")) {
                    fprintf(stderr, "kgen tune: error: only --target c can be tuned, not '%s'\n", v);
                    goto out;
                }
            } else if (!strcmp(a, "--trials") || !strcmp(a, "--runs") || !strcmp(a, "--seed")) {
                if (!num || n < 0 || n > 1000000) {
                    fprintf(stderr, "kgen tune: error: %s needs a whole number, not '%s'\n", a, v);
                    goto out;
                }
                if (!strcmp(a, "--trials"))
                    trials = (int)n;
                else if (!strcmp(a, "--runs"))
                    tl.runs = n > 0 ? (int)n : 1;
                else
                    seed = (uint64_t)n;
            } else if (!strcmp(a, "--log")) {
                log = v;
            } else if (!strcmp(a, "--cc")) {
                tl.cc = v;
            } else if (!strcmp(a, "--cflags")) {
                tl.cflags = v;
            } else if (!strcmp(a, "--runner")) {
                tl.runner = v;
            } else {
                tl.work = v;
            }
        } else if ((n_shape = gen_shape_option(&opt, argc, argv, &i, "kgen tune")) != 0) {
            if (n_shape < 0)
                goto out;
        } else if (!strncmp(a, "-D", 2)) {
            const char *d = a[2] ? a + 2 : (i + 1 < argc ? argv[++i] : "");
            const char *eq = strchr(d, '=');
            char *end = NULL;
            long long v = eq ? strtoll(eq + 1, &end, 0) : 0;
            if (!eq || eq == d || !end || *end || end == eq + 1 || opt.ndefines == GEN_MAX_DEFINES) {
                fprintf(stderr, "kgen tune: error: bad define '%s' (expected -DNAME=INTEGER)\n", d);
                goto out;
            }
            char *name = malloc((size_t)(eq - d) + 1);
            if (!name)
                goto out;
            memcpy(name, d, (size_t)(eq - d));
            name[eq - d] = 0;
            opt.defines[opt.ndefines].name = name;
            opt.defines[opt.ndefines++].value = v;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "kgen tune: error: unknown option '%s' (see kgen tune --help)\n", a);
            goto out;
        } else if (opt.input) {
            fprintf(stderr, "kgen tune: error: more than one input file ('%s' and '%s')\n", opt.input, a);
            goto out;
        } else {
            opt.input = a;
        }
    }
    if (!opt.input || !log) {
        tune_usage(stderr);
        goto out;
    }
    if (target_parse("c", &opt.tgt))
        goto fail;
    if (!tl.work) {
        snprintf(work, sizeof work, "%s.work", log);
        tl.work = work;
    }
    if (tune(&opt, &tl, log, trials, seed) == 0)
        rc = 0;
fail:
    if (rc) {
        const char *msg = ir_errmsg();
        fprintf(stderr, "%s%s\n", strstr(msg, "error:") ? "" : "kgen tune: error: ", msg);
    }
out:
    for (int i = 0; i < opt.ndefines; i++)
        free((char *)opt.defines[i].name);
    gen_shape_options_free(&opt);
    return rc;
}

/* ---------------------------------------------------------------- --tuning-log */

int gen_tune_apply(GenOptions *opt, const char *log)
{
    Workload *w = malloc(sizeof *w);
    if (!w)
        ir_die("out of memory");
    int rc = -1;
    char cfg[1024];
    double score;
    char built[1024];
    static SchTile tile;
    if (load_workload(opt, w))
        goto done;
    FILE *f = fopen(log, "r");
    if (!f) {
        ir_fail("cannot read the tuning log '%s'", log);
        goto done;
    }
    fclose(f);
    if (!sch_tune_log_best(log, w->key, cfg, sizeof cfg, &score, built)) {
        fprintf(stderr, "kgen: note: no record for %s in %s; the schedule is untuned\n", w->key, log);
        rc = 0;
        goto done;
    }
    if (built[0])   /* the speed measured holds for a build with the same flags */
        fprintf(stderr, "kgen: note: %s was tuned built with '%s'\n", w->key, built);
    if (w->onnx) {
        int64_t v[6];
        tile = sch_tile_default;
        const char *names[6] = {"rows", "cols", "vectorize", "unroll", "k_outer", "blocks"};
        int *fields[6] = {&tile.rows, &tile.cols, &tile.vectorize, &tile.unroll, &tile.k_outer, &tile.blocks};
        for (int k = 0; k < 6; k++)
            if (sch_tune_config_value(cfg, names[k], &v[k]) == 0 && v[k] >= 0 && v[k] <= SCH_MAX_VECTOR)
                *fields[k] = (int)v[k];
        opt->tile = &tile;
        int64_t layout;
        if (opt->layout_block == GEN_LAYOUT_AUTO && sch_tune_config_value(cfg, "layout", &layout) == 0 &&
            (layout == 0 || layout == 8 || layout == 16))
            opt->layout_block = layout ? (int)layout : GEN_LAYOUT_NCHW;   /* unless --layout chose one */
    } else {
        for (int k = 0; k < w->space.n; k++) {
            int64_t v;
            if (sch_tune_config_value(cfg, w->space.knobs[k].name, &v))
                continue;
            if (opt->ndefines == GEN_MAX_DEFINES) {
                ir_fail("too many defines");
                goto done;
            }
            size_t n = strlen(w->space.knobs[k].name);
            char *name = malloc(n + 1);
            if (!name)
                ir_die("out of memory");
            memcpy(name, w->space.knobs[k].name, n + 1);
            opt->defines[opt->ndefines].name = name;
            opt->defines[opt->ndefines++].value = v;
        }
    }
    rc = 0;
done:
    free(w);
    return rc;
}
