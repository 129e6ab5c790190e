/* target.c - parsing `--target NAME [-attr...]` (see target.h). */
#include "target.h"
#include "../ir/ir.h"

#include <stdlib.h>
#include <string.h>

static const struct {
    const char *name;
    TargetKind kind;
} kinds[] = {
    {"c", TARGET_C}, {"cuda", TARGET_CUDA}, {"opencl", TARGET_OPENCL},
    {"metal", TARGET_METAL}, {"js", TARGET_JS}, {"wasm", TARGET_WASM},
};

int target_is_gpu(const Target *t)
{
    return t->kind == TARGET_CUDA || t->kind == TARGET_OPENCL || t->kind == TARGET_METAL;
}

/* A positive integer attribute value within [lo, hi]. */
static int attr_int(const char *attr, const char *v, int64_t lo, int64_t hi, int64_t *out)
{
    char *end;
    long long x = strtoll(v, &end, 10);
    if (!*v || *end || x < lo || x > hi)
        return ir_fail("target attribute '%s': expected an integer from %lld to %lld", attr, (long long)lo,
                       (long long)hi);
    *out = x;
    return 0;
}

int target_attr(Target *t, const char *attr)
{
    int64_t v;
    const char *eq = strchr(attr, '=');
    const char *val = eq ? eq + 1 : "";
    size_t n = eq ? (size_t)(eq - attr) : strlen(attr);
#define IS(s) (n == strlen(s) && !strncmp(attr, s, n))
    if (IS("-arch") && t->kind == TARGET_CUDA) {
        if (strncmp(val, "sm_", 3) || attr_int(attr, val + 3, 50, 200, &v))
            return ir_fail("target attribute '%s': expected -arch=sm_NN, e.g. -arch=sm_90", attr);
        t->sm = (int)v;
        return 0;
    }
    if (IS("-max-threads") && target_is_gpu(t)) {
        if (attr_int(attr, val, 1, 1024, &v))
            return -1;
        t->max_threads = (int)v;
        return 0;
    }
    if (IS("-max-shared") && target_is_gpu(t)) {
        if (attr_int(attr, val, 0, (int64_t)1 << 30, &v))
            return -1;
        t->max_shared = v;
        return 0;
    }
    if (IS("-simd") && t->kind == TARGET_WASM && !eq) {
        t->simd = 1;
        return 0;
    }
#undef IS
    return ir_fail("unknown attribute '%s' for target %s (%s)", attr, t->name,
                   t->kind == TARGET_CUDA     ? "cuda takes -arch=sm_NN, -max-threads=N, -max-shared=BYTES"
                   : target_is_gpu(t)         ? "it takes -max-threads=N, -max-shared=BYTES"
                   : t->kind == TARGET_WASM   ? "wasm takes -simd"
                                              : "it takes none");
}

int target_parse(const char *spec, Target *t)
{
    memset(t, 0, sizeof *t);
    char word[256];
    const char *p = spec;
    int first = 1;
    for (;;) {
        while (*p == ' ')
            p++;
        if (!*p)
            break;
        size_t n = strcspn(p, " ");
        if (n >= sizeof word)
            return ir_fail("target '%s': a word is too long", spec);
        memcpy(word, p, n);
        word[n] = 0;
        p += n;
        if (first) {
            first = 0;
            size_t k;
            for (k = 0; k < sizeof kinds / sizeof *kinds; k++)
                if (!strcmp(word, kinds[k].name))
                    break;
            if (k == sizeof kinds / sizeof *kinds)
                return ir_fail("unknown target '%s' (use c, cuda, opencl, metal, js or wasm)", word);
            t->kind = kinds[k].kind;
            t->name = kinds[k].name;
            /* defaults: what every GPU of the last years gives */
            t->sm = 90;
            t->max_threads = t->kind == TARGET_CUDA ? 1024 : 256;
            t->max_shared = t->kind == TARGET_CUDA ? 48 * 1024 : t->kind == TARGET_METAL ? 32 * 1024 : 32 * 1024;
            continue;
        }
        if (target_attr(t, word))
            return -1;
    }
    if (first)
        return ir_fail("empty target (use c, cuda, opencl, metal, js or wasm)");
    return 0;
}

/* ---------------------------------------------------------------- dispatch */

#include "emit.h"

int em_kernel_files(OutSet *o, const Kernel *k, const char *name, const char *source, const Target *t)
{
    switch (t->kind) {
    case TARGET_C: return em_c_kernel_files(o, k, name, source);
    case TARGET_CUDA:
    case TARGET_OPENCL:
    case TARGET_METAL: return em_gpu_kernel_files(o, k, name, source, t);
    case TARGET_JS:
    case TARGET_WASM: return em_js_kernel_files(o, k, name, source, t);
    default: return ir_fail("target %s is not supported yet", t->name);
    }
}

int em_model_files(OutSet *o, const EmModel *m, const Target *t)
{
    switch (t->kind) {
    case TARGET_C: return em_c_model_files(o, m);
    case TARGET_CUDA:
    case TARGET_OPENCL:
    case TARGET_METAL: return em_gpu_model_files(o, m);
    case TARGET_JS:
    case TARGET_WASM: return em_js_model_files(o, m, t);
    default: return ir_fail("target %s is not supported yet for models", t->name);
    }
}
