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
    {"metal", TARGET_METAL}, {"js", TARGET_JS}, {"wasm", TARGET_WASM}, {"webgpu", TARGET_WEBGPU},
};

int target_is_gpu(const Target *t)
{
    return t->kind == TARGET_CUDA || t->kind == TARGET_OPENCL || t->kind == TARGET_METAL || t->kind == TARGET_WEBGPU;
}

int target_block_threads(const Target *t)
{
    return t->max_threads < TARGET_DEFAULT_BLOCK_THREADS ? t->max_threads : TARGET_DEFAULT_BLOCK_THREADS;
}

int64_t target_arena_align(const Target *t, int gpu_schedule)
{
    return target_is_gpu(t) || gpu_schedule ? TARGET_GPU_ARENA_ALIGN : 0;
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

/* ---------------------------------------------------------------- C: -mattr, -mcpu */

static const struct {
    const char *name;
    unsigned set;      /* what +name turns on */
    unsigned clear;    /* what -name turns off */
} features[] = {
    {"avx2", TARGET_F_AVX2, TARGET_F_AVX2 | TARGET_F_AVX512F},
    {"fma", TARGET_F_FMA, TARGET_F_FMA | TARGET_F_AVX512F},
    {"avx512f", TARGET_F_AVX512F | TARGET_F_AVX2 | TARGET_F_FMA, TARGET_F_AVX512F},
    {"neon", TARGET_F_NEON, TARGET_F_NEON},
};

#define F_X86 (TARGET_F_AVX2 | TARGET_F_FMA | TARGET_F_AVX512F)
#define F_AVX2 (TARGET_F_AVX2 | TARGET_F_FMA)
#define F_AVX512 (TARGET_F_AVX512F | TARGET_F_AVX2 | TARGET_F_FMA)

/* CPU names as gcc and clang spell them (-march, -mcpu) */
static const struct {
    const char *name;
    unsigned features;
} cpus[] = {
    {"x86-64", 0}, {"x86-64-v2", 0}, {"x86-64-v3", F_AVX2}, {"x86-64-v4", F_AVX512},
    {"haswell", F_AVX2}, {"broadwell", F_AVX2}, {"skylake", F_AVX2}, {"alderlake", F_AVX2},
    {"znver1", F_AVX2}, {"znver2", F_AVX2}, {"znver3", F_AVX2},
    {"skylake-avx512", F_AVX512}, {"cascadelake", F_AVX512}, {"cooperlake", F_AVX512},
    {"icelake-client", F_AVX512}, {"icelake-server", F_AVX512}, {"tigerlake", F_AVX512},
    {"sapphirerapids", F_AVX512}, {"znver4", F_AVX512}, {"znver5", F_AVX512},
    {"armv8-a", TARGET_F_NEON}, {"cortex-a53", TARGET_F_NEON}, {"cortex-a55", TARGET_F_NEON},
    {"cortex-a57", TARGET_F_NEON}, {"cortex-a72", TARGET_F_NEON}, {"cortex-a73", TARGET_F_NEON},
    {"cortex-a76", TARGET_F_NEON}, {"cortex-a78", TARGET_F_NEON}, {"cortex-x1", TARGET_F_NEON},
    {"neoverse-n1", TARGET_F_NEON}, {"neoverse-n2", TARGET_F_NEON}, {"neoverse-v1", TARGET_F_NEON},
    {"neoverse-v2", TARGET_F_NEON}, {"apple-m1", TARGET_F_NEON}, {"apple-m2", TARGET_F_NEON},
    {"apple-m3", TARGET_F_NEON}, {"a64fx", TARGET_F_NEON},
};

/* -mattr=+f1,-f2,...: features on and off, in order */
static int attr_mattr(Target *t, const char *attr, const char *v)
{
    unsigned f = t->features;
    if (!*v)
        return ir_fail("target attribute '%s': expected -mattr=+FEATURE[,...] (avx2, fma, avx512f, neon)", attr);
    while (*v) {
        size_t n = strcspn(v, ",");
        size_t k;
        for (k = 0; k < sizeof features / sizeof *features; k++)
            if (n > 1 && strlen(features[k].name) == n - 1 && !strncmp(v + 1, features[k].name, n - 1))
                break;
        if ((v[0] != '+' && v[0] != '-') || k == sizeof features / sizeof *features)
            return ir_fail("target attribute '%s': unknown feature '%.*s' (kgen knows +avx2, +fma, +avx512f "
                           "and +neon; a leading - turns one off)", attr, (int)n, v);
        if (v[0] == '+')
            f |= features[k].set;
        else
            f &= ~features[k].clear;
        v += n;
        if (*v == ',')
            v++;
    }
    if ((f & F_X86) && (f & TARGET_F_NEON))
        return ir_fail("target attribute '%s': mixes x86 (avx2, fma, avx512f) and ARM (neon) features", attr);
    t->features = f;
    return 0;
}

static int attr_mcpu(Target *t, const char *attr, const char *v)
{
    if (!strcmp(v, "native"))
        return ir_fail("target attribute '%s': kgen writes code for a named CPU, not for the machine it runs "
                       "on: name it (-mcpu=skylake-avx512) or its features (-mattr=+avx2,+fma)", attr);
    for (size_t k = 0; k < sizeof cpus / sizeof *cpus; k++)
        if (!strcmp(v, cpus[k].name)) {
            t->features = cpus[k].features;
            t->cpu = cpus[k].name;
            return 0;
        }
    return ir_fail("target attribute '%s': unknown CPU '%s' (for example x86-64-v3, x86-64-v4, skylake-avx512, "
                   "znver4, cortex-a72, neoverse-n1, apple-m1; or name features with -mattr)", attr, v);
}

int target_simd_lanes(const Target *t)
{
    if (t->kind == TARGET_WASM)
        return 4;   /* also -nosimd: the same C, whose micro-kernels are plain loops there */
    if (t->kind != TARGET_C)
        return 0;
    return t->features & TARGET_F_AVX512F ? 16 : t->features & TARGET_F_NEON ? 4 : 8;   /* AVX2; any CPU */
}

int target_simd_regs(const Target *t)
{
    /* a wasm engine maps v128 values to the host's vector registers: 16 xmm on x86-64
     * (V8, SpiderMonkey), which a register tile must not outgrow; NEON hosts have 32 */
    return t->kind == TARGET_WASM ? 16 : 0;
}

const char *target_simd_name(const Target *t)
{
    switch (target_simd_lanes(t)) {
    case 16: return "avx512f";
    case 8: return t->features & TARGET_F_AVX2 ? "avx2" : "any CPU";
    case 4: return t->kind == TARGET_WASM ? "simd128" : "neon";
    default: return NULL;
    }
}

const char *target_c_cflags(const Target *t)
{
    if (t->cpu)   /* gcc and clang spell an x86 CPU with -march, an ARM one with -mcpu (armv8-a: -march) */
        return ir_fmt("-O3 %s=%s", t->features & TARGET_F_NEON && strncmp(t->cpu, "armv", 4) ? "-mcpu" : "-march",
                      t->cpu);
    if (!(t->features & F_X86))
        return "-O3 $(NATIVE)";   /* NEON is AArch64's baseline: nothing to add */
    const char *flags = "-O3";
    for (size_t k = 0; k < sizeof features / sizeof *features; k++) {
        unsigned own = features[k].set & features[k].clear;   /* the feature's own bit */
        if (own & F_X86 & t->features)   /* gcc's and clang's -mavx2, -mfma, -mavx512f */
            flags = ir_fmt("%s -m%s", flags, features[k].name);
    }
    return flags;
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
    /* wasm is SIMD128 unless -nosimd; -simd (once needed for it) is kept as a no-op */
    if ((IS("-simd") || IS("-nosimd")) && t->kind == TARGET_WASM && !eq) {
        t->simd = IS("-simd");
        return 0;
    }
    if (IS("-mattr") && t->kind == TARGET_C && eq)
        return attr_mattr(t, attr, val);
    if (IS("-mcpu") && t->kind == TARGET_C && eq)
        return attr_mcpu(t, attr, val);
#undef IS
    return ir_fail("unknown attribute '%s' for target %s (%s)", attr, t->name,
                   t->kind == TARGET_CUDA     ? "cuda takes -arch=sm_NN, -max-threads=N, -max-shared=BYTES"
                   : target_is_gpu(t)         ? "it takes -max-threads=N, -max-shared=BYTES"
                   : t->kind == TARGET_WASM   ? "wasm takes -nosimd (scalar, no SIMD128)"
                   : t->kind == TARGET_C      ? "c takes -mattr=+avx2,+fma, -mattr=+avx512f, -mattr=+neon, -mcpu=NAME"
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
                return ir_fail("unknown target '%s' (use c, cuda, opencl, metal, js, wasm or webgpu)", word);
            t->kind = kinds[k].kind;
            t->name = kinds[k].name;
            /* defaults: what every GPU of the last years gives */
            t->sm = 90;
            t->max_threads = t->kind == TARGET_CUDA ? 1024 : 256;
            /* WebGPU: its default limits, maxComputeInvocationsPerWorkgroup 256 and
             * maxComputeWorkgroupStorageSize 16 KiB */
            t->max_shared = t->kind == TARGET_CUDA ? 48 * 1024 : t->kind == TARGET_WEBGPU ? 16 * 1024 : 32 * 1024;
            t->simd = t->kind == TARGET_WASM;   /* every current browser and node has SIMD128 */
            continue;
        }
        if (target_attr(t, word))
            return -1;
    }
    if (first)
        return ir_fail("empty target (use c, cuda, opencl, metal, js, wasm or webgpu)");
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
    case TARGET_WEBGPU: return em_webgpu_kernel_files(o, k, name, source, t);
    default: return ir_fail("target %s is not supported yet", t->name);
    }
}

int em_model_files(OutSet *o, const EmModel *m, const Target *t)
{
    /* only the C target tells the other --weights modes apart; the rest embed or load */
    EmModel other = *m;
    other.weights_in_file = m->weights_in_file == EM_WEIGHTS_FILE;
    const PtrVec *dims = &m->model->prog->dims;
    for (int i = 0; i < dims->n && t->kind == TARGET_WEBGPU; i++) {
        const IrDim *d = dims->items[i];
        if (d->count)
            return ir_fail("output extents computed from values (%s: NonZero, Compress, Unique, NonMaxSuppression, "
                           "TopK of a run-time K, a run-time Loop's scan outputs) are not supported by the WebGPU "
                           "target yet (C, JS, WASM, OpenCL, CUDA and Metal take them)",
                           d->name);
    }
    if (dims->n && t->kind == TARGET_WEBGPU)
        return ir_fail("dims decided at run time (%s, ...) are not supported by the WebGPU target yet (C, JS, WASM, "
                       "CUDA, OpenCL and Metal take them); fix them (--dim or --input-shape with one value) for --target %s",
                       ((const IrDim *)dims->items[0])->name, t->name);
    switch (t->kind) {
    case TARGET_C: {
        EmModel c = *m;
        c.cflags = target_c_cflags(t);
        return em_c_model_files(o, &c);
    }
    case TARGET_CUDA:
    case TARGET_OPENCL:
    case TARGET_METAL: return em_gpu_model_files(o, &other);
    case TARGET_JS:
    case TARGET_WASM: return em_js_model_files(o, &other, t);
    case TARGET_WEBGPU: return em_webgpu_model_files(o, &other);
    default: return ir_fail("target %s is not supported yet for models", t->name);
    }
}
