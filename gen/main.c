/* main.c - the kgen command line. */
#include "gen.h"

#include <stdlib.h>
#include <string.h>

#define KGEN_VERSION "0.1.0"

static void usage(FILE *f)
{
    fputs("usage: kgen FILE.kg --target c -o DIR [options]\n"
          "       kgen MODEL.onnx --target c -o DIR [--name N] [--main] [--report]\n"
          "       kgen tune FILE.kg|MODEL.onnx --log LOG [--trials N] ... (kgen tune --help)\n"
          "\n"
          "Generates readable C for the tensor program in FILE.kg or the ONNX model.\n"
          "\n"
          "options:\n"
          "  --target T      target language: c (default), cuda, opencl, metal, js, wasm,\n"
          "                  webgpu (WGSL and an ES module); a\n"
          "                  comma-separated list writes DIR/T for each. Attributes follow the\n"
          "                  name or come as separate words: cuda -arch=sm_90 (default sm_90),\n"
          "                  -max-threads=N (threads per block; cuda 1024, others 256),\n"
          "                  -max-shared=BYTES (shared memory per block; 48K cuda, 16K webgpu,\n"
          "                  32K others),\n"
          "                  wasm -nosimd (scalar; SIMD128 by default); c -mattr=+avx2,+fma |\n"
          "                  +avx512f | +neon, -mcpu=CPU (x86-64-v3, skylake-avx512,\n"
          "                  neoverse-n1, ...): SIMD micro-kernels for the register tiles\n"
          "                  (tensorize), plain C where not enabled\n"
          "  -o DIR          write NAME.c, NAME.h and kgen_runtime.h into DIR\n"
          "  --name N        kernel and file name (default: `kernel` in the file, else its name)\n"
          "  -DNAME=VALUE    override a `param` of the file\n"
          "  --no-schedule   ignore the file's schedule sections (plain loop nests)\n"
          "  --schedule=gpu  (ONNX, target c) use the default GPU schedule: its bound loops run as\n"
          "                  plain C loops, a CPU check of what the GPU targets compute\n"
          "  --dump=PASS     print the IR after PASS of the pipeline to stdout (import, prune,\n"
          "                  layout, schedule, lower, emit, ...: see --list-passes); tir: the\n"
          "                  tensor IR the schedule left\n"
          "  --list-passes   print the pipeline's passes in order, one a line, and exit\n"
          "  --main          (ONNX) also write a runner program NAME_main.c and a Makefile\n"
          "  --report        (ONNX) print the fused kernels, their MACs and the memory plan\n"
          "  --weights=MODE  (ONNX) auto (default): embed up to 8 MiB of weights, incbin above;\n"
          "                  embed: static const arrays in NAME_weights.c; incbin (target c):\n"
          "                  NAME_weights.bin, linked by NAME_weights.S (.incbin: assemble it in\n"
          "                  its folder); file: NAME_weights.bin, passed in with NAME_set_weights()\n"
          "  --input-shape NAME=D0,D1,...\n"
          "                  (ONNX) the shape of graph input NAME (its symbolic and unknown dims);\n"
          "                  a dim LO..HI is decided at run time, in that range (C target)\n"
          "  --dim SYMBOL=N  (ONNX) every dimension named SYMBOL in the graph inputs is N;\n"
          "                  SYMBOL=LO..HI: decided at run time (the entry points take it)\n"
          "  --bind NAME=VALUE, --bind NAME=FILE.npy|FILE.pb\n"
          "                  (ONNX) graph input NAME is this constant: it leaves the generated\n"
          "                  signature, and what it decides (shapes, If, Loop counts) is folded\n"
          "  --bind-inputs D (ONNX) data (D/input_N.pb) for inputs whose values set shapes or\n"
          "                  loop counts (only those inputs are frozen)\n"
          "  --tuning-log L  (target c) apply the best record of `kgen tune`'s log L\n"
          "  --layout=L      (ONNX) activation layout of 2-D convs: auto (default: NCHWc8, or\n"
          "                  NCHWc16 for -mattr=+avx512f, when a conv has 16 or more output\n"
          "                  channels; NCHW otherwise and on GPUs), nchw, nchwc (blocks of 8\n"
          "                  channels, same as nchwc8) or nchwc16\n"
          "  --winograd=W    (ONNX, CPU) 3x3 stride-1 convs over blocked channels as Winograd\n"
          "                  F(4x4, 3x3): auto (default: where it pays: 32 or more channels\n"
          "                  in and out, 16 or more output tiles), off, or all (every one)\n"
          "  --extent-versions=on|off\n"
          "                  (ONNX, target c, run-time dims) on (default): steps are also built\n"
          "                  for smaller extents (their tiles, no threads where too small)\n"
          "                  and for extent 1 of a dim whose range starts at 1;\n"
          "                  off: one version of each, smaller code, slower at small extents\n"
          "  --max-file-mb=N largest file read: model, .kg source, bound input (default 2048)\n"
          "  --max-nodes=N   (ONNX) most nodes in one graph (default 1000000)\n"
          "  --max-elements=N\n"
          "                  (ONNX) most elements in one tensor (default and ceiling 2147483647)\n"
          "  --help          this text\n"
          "  --version       the version\n",
          f);
}

static int parse_define(const char *arg, Define *d)
{
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg)
        return -1;
    char *end;
    long long v = strtoll(eq + 1, &end, 0);
    if (*end || end == eq + 1)
        return -1;
    size_t n = (size_t)(eq - arg);
    char *name = malloc(n + 1);
    if (!name)
        return -1;
    memcpy(name, arg, n);
    name[n] = 0;
    d->name = name;
    d->value = v;
    return 0;
}

/* --max-NAME=N: a positive integer up to max; 0, or -1 after a message. */
static int parse_limit(const char *a, int64_t max, int64_t *out)
{
    const char *eq = strchr(a, '=');
    char *end;
    long long v = eq ? strtoll(eq + 1, &end, 10) : 0;
    if (!eq || end == eq + 1 || *end || v < 1 || v > max) {
        fprintf(stderr, "kgen: error: %.*s needs a whole number from 1 to %lld, not '%s'\n",
                (int)(eq ? eq - a : (ptrdiff_t)strlen(a)), a, (long long)max, eq ? eq + 1 : "");
        return -1;
    }
    *out = v;
    return 0;
}

/* Is a the start of a target attribute given as its own word ("-arch=sm_80", "-nosimd")? */
static int is_target_attr(const char *a)
{
    return !strncmp(a, "-arch=", 6) || !strncmp(a, "-max-threads=", 13) || !strncmp(a, "-max-shared=", 12) ||
           !strcmp(a, "-simd") || !strcmp(a, "-nosimd") || !strncmp(a, "-mattr=", 7) || !strncmp(a, "-mcpu=", 6);
}

/* The length of the list's first target: up to a comma, except one inside an -mattr list
 * ("c -mattr=+avx2,+fma,js": a comma before + or - goes on with the features). */
static size_t target_spec_len(const char *p)
{
    size_t n = strcspn(p, ",");
    while (p[n] == ',' && (p[n + 1] == '+' || p[n + 1] == '-'))
        n += 1 + strcspn(p + n + 1, ",");
    return n;
}

/* Compile for each target of the comma-separated list; with several, each gets DIR/TARGET. */
static int compile_targets(GenOptions *opt, const char *list, const char **attrs, int nattrs)
{
    int ntargets = 1;
    for (const char *c = list; c[target_spec_len(c)]; c += target_spec_len(c) + 1)
        ntargets++;
    const char *outdir = opt->outdir;
    int used[64] = {0};
    /* pass 0 checks every target and attribute, so that nothing is written for a list
     * with a bad one; pass 1 compiles */
    for (int pass = 0; pass < 2; pass++) {
        for (const char *p = list;;) {
            size_t n = target_spec_len(p);
            char spec[512];
            if (n >= sizeof spec)
                return ir_fail("target '%s' is too long", list);
            memcpy(spec, p, n);
            spec[n] = 0;
            if (target_parse(spec, &opt->tgt))
                return -1;
            for (int i = 0; i < nattrs; i++) {
                /* a separate attribute applies to the targets that take it */
                Target probe = opt->tgt;
                if (target_attr(&probe, attrs[i]) == 0) {
                    opt->tgt = probe;
                    used[i] = 1;
                } else if (ntargets == 1) {
                    return -1;
                }
            }
            opt->target = opt->tgt.name;
            if (pass == 1) {
                char *dir = NULL;
                if (outdir && ntargets > 1) {
                    dir = malloc(strlen(outdir) + strlen(opt->tgt.name) + 2);
                    if (!dir)
                        return ir_fail("out of memory");
                    sprintf(dir, "%s/%s", outdir, opt->tgt.name);
                    opt->outdir = dir;
                }
                int rc = gen_compile(opt);
                opt->outdir = outdir;
                free(dir);
                if (rc)
                    return rc;
            }
            if (!p[n])
                break;
            p += n + 1;
        }
        for (int i = 0; i < nattrs && pass == 0; i++)
            if (!used[i])
                return ir_fail("target attribute '%s' applies to none of the targets '%s'", attrs[i], list);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "tune"))
        return gen_tune_main(argc - 1, argv + 1);
    GenOptions opt = {0};
    opt.target = "c";
    const char *attrs[64];
    const char *tuning_log = NULL;
    int nattrs = 0, rc;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--version")) {
            printf("kgen %s\n", KGEN_VERSION);
            return 0;
        } else if (!strcmp(a, "--target") || !strcmp(a, "-o") || !strcmp(a, "--name")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "kgen: error: %s needs a value\n", a);
                return 1;
            }
            const char *v = argv[++i];
            if (!strcmp(a, "--target"))
                opt.target = v;
            else if (!strcmp(a, "-o"))
                opt.outdir = v;
            else
                opt.name = v;
        } else if (!strncmp(a, "--target=", 9)) {
            opt.target = a + 9;
        } else if (!strncmp(a, "--name=", 7)) {
            opt.name = a + 7;
        } else if (!strcmp(a, "--list-passes")) {
            gen_list_passes(stdout);
            return 0;
        } else if (!strncmp(a, "--dump=", 7)) {
            opt.dump = a + 7;
            if (!gen_pass_known(opt.dump)) {
                fprintf(stderr, "kgen: error: %s\n", ir_errmsg());
                return 1;
            }
        } else if (!strcmp(a, "--check-onnx") || !strcmp(a, "--interp-write")) {
            /* developer aids: kgen --check-onnx DIR... runs node tests in the interpreter;
             * --interp-write DIR... writes the interpreter's outputs as their expected ones
             * (the reference of tests/fuzz_graphs.sh) */
            int bad = 0, pass = 0, write = a[2] == 'i';
            for (int j = i + 1; j < argc; j++) {
                Arena *ar = ir_arena_new();
                ir_arena_set(ar);
                ir_clear_error();
                int rc = write ? gen_interp_write_dir(argv[j]) : gen_check_onnx_dir(argv[j]);
                printf("%s %s%s%s\n", rc == 0 ? "PASS" : rc == 1 ? "FAIL" : "ERROR", argv[j], rc ? ": " : "",
                       rc ? ir_errmsg() : "");
                pass += rc == 0;
                bad += rc != 0;
                ir_arena_free(ar);
            }
            printf("check: %d passed, %d failed\n", pass, bad);
            return bad != 0;
        } else if (!strcmp(a, "--schedule=gpu")) {
            opt.gpu_schedule = 1;
        } else if (!strcmp(a, "--no-schedule")) {
            opt.no_schedule = 1;
        } else if (!strcmp(a, "--main")) {
            opt.with_main = 1;
        } else if (!strncmp(a, "--weights", 9)) {
            static const char *const modes[] = {"auto", "file", "embed", "incbin"};   /* EM_WEIGHTS_* */
            int k = 0;
            while (k < 4 && (a[9] != '=' || strcmp(a + 10, modes[k])))
                k++;
            if (k == 4) {
                fprintf(stderr, "kgen: error: unknown weights mode '%s' (use --weights=auto, embed, incbin or file)\n", a);
                return 1;
            }
            opt.weights_in_file = k;
        } else if (!strncmp(a, "--layout=", 9)) {
            const char *l = a + 9;
            opt.layout_block = !strcmp(l, "nchwc") || !strcmp(l, "nchwc8") ? 8
                               : !strcmp(l, "nchwc16")                  ? 16
                               : !strcmp(l, "nchw")                     ? GEN_LAYOUT_NCHW
                                                                        : GEN_LAYOUT_AUTO;
            if (opt.layout_block == GEN_LAYOUT_AUTO && strcmp(l, "auto")) {
                fprintf(stderr, "kgen: error: unknown layout '%s' (use auto, nchw, nchwc, nchwc8 or nchwc16)\n", l);
                return 1;
            }
        } else if (!strncmp(a, "--winograd=", 11)) {
            static const char *const modes[] = {"auto", "off", "all"};   /* IR_WINOGRAD_* */
            int k = 0;
            while (k < 3 && strcmp(a + 11, modes[k]))
                k++;
            if (k == 3) {
                fprintf(stderr, "kgen: error: unknown winograd mode '%s' (use auto, off or all)\n", a + 11);
                return 1;
            }
            opt.winograd = k;
        } else if (!strncmp(a, "--extent-versions=", 18)) {
            const char *v = a + 18;
            if (strcmp(v, "on") && strcmp(v, "off")) {
                fprintf(stderr, "kgen: error: --extent-versions takes on or off, not '%s'\n", v);
                return 1;
            }
            opt.no_extent_versions = !strcmp(v, "off");
        } else if (!strcmp(a, "--report")) {
            opt.report = 1;
        } else if (!strcmp(a, "--tuning-log")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "kgen: error: --tuning-log needs a file\n");
                return 1;
            }
            tuning_log = argv[++i];
        } else if ((rc = gen_shape_option(&opt, argc, argv, &i, "kgen")) != 0) {
            if (rc < 0)
                return 1;
        } else if (!strcmp(a, "--bind-inputs")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "kgen: error: --bind-inputs needs a directory\n");
                return 1;
            }
            opt.bind_dir = argv[++i];
        } else if (!strncmp(a, "--max-file-mb=", 14)) {
            if (parse_limit(a, (int64_t)1 << 20, &opt.max_file_bytes))
                return 1;
            opt.max_file_bytes <<= 20;
        } else if (!strncmp(a, "--max-nodes=", 12)) {
            if (parse_limit(a, INT32_MAX, &opt.max_nodes))
                return 1;
        } else if (!strncmp(a, "--max-elements=", 15)) {
            if (parse_limit(a, GEN_MAX_ELEMS, &opt.max_elements))
                return 1;
        } else if (!strncmp(a, "-D", 2)) {
            const char *d = a[2] ? a + 2 : (i + 1 < argc ? argv[++i] : "");
            if (opt.ndefines == GEN_MAX_DEFINES || parse_define(d, &opt.defines[opt.ndefines])) {
                fprintf(stderr, "kgen: error: bad define '%s' (expected -DNAME=INTEGER)\n", d);
                return 1;
            }
            opt.ndefines++;
        } else if (is_target_attr(a)) {
            if (nattrs == 64) {
                fprintf(stderr, "kgen: error: too many target attributes\n");
                return 1;
            }
            attrs[nattrs++] = a;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "kgen: error: unknown option '%s' (see kgen --help)\n", a);
            return 1;
        } else if (opt.input) {
            fprintf(stderr, "kgen: error: more than one input file ('%s' and '%s')\n", opt.input, a);
            return 1;
        } else {
            opt.input = a;
        }
    }
    if (!opt.input) {
        usage(stderr);
        return 1;
    }
    if (!opt.outdir && !opt.dump && !opt.report) {
        fprintf(stderr, "kgen: error: nothing to do: give -o DIR, --report or --dump=PASS\n");
        return 1;
    }
    rc = tuning_log ? gen_tune_apply(&opt, tuning_log) : 0;
    if (!rc)
        rc = compile_targets(&opt, opt.target, attrs, nattrs);
    for (int i = 0; i < opt.ndefines; i++)
        free((char *)opt.defines[i].name);
    gen_shape_options_free(&opt);
    if (rc) {
        const char *msg = ir_errmsg();
        fprintf(stderr, "%s%s\n", strstr(msg, "error:") ? "" : "kgen: error: ", msg);
        return 1;
    }
    return 0;
}
