/* target.h - what `--target` names: the output language and its attributes.
 *
 * A target is written as its name followed by attributes, in one argument or as separate
 * command-line words: "cuda -arch=sm_80", "opencl -max-threads=256", "wasm -nosimd". The
 * GPU attributes are limits that the default GPU schedule respects and that kgen checks
 * every bound kernel against (a schedule asking for more is an error, not a broken kernel).
 * The C target's -mattr and -mcpu name the SIMD ISA of the CPU the code is for ("c
 * -mattr=+avx2,+fma", "c -mcpu=neoverse-n1"): vector loops of register tiles then call
 * micro-kernels written with its intrinsics (tensorize), which fall back to plain C where
 * the compiler does not enable that ISA. Without them ("c"), the code is for any CPU: tiles
 * of 8 lanes, whose micro-kernels kgen_ukernels.h writes with AVX+FMA, NEON, SIMD128 or
 * plain C as the compiler building it enables (AVX2's shape, 16 registers; the output
 * never depends on the machine kgen runs on).
 */
#ifndef KGEN_TARGET_H
#define KGEN_TARGET_H

#include <stdint.h>

typedef enum {
    TARGET_C,
    TARGET_CUDA,
    TARGET_OPENCL,
    TARGET_METAL,
    TARGET_JS,
    TARGET_WASM,
    TARGET_WEBGPU
} TargetKind;

typedef struct {
    TargetKind kind;
    const char *name;          /* "c", "cuda", "opencl", "metal", "js", "wasm", "webgpu" */
    /* GPU targets */
    int sm;                    /* cuda: compute capability x10 (-arch=sm_90: 90) */
    int max_threads;           /* threads per block (work-group, threadgroup) */
    int64_t max_shared;        /* bytes of shared (local, threadgroup) memory per block */
    /* wasm */
    int simd;                  /* SIMD128 (-msimd128), the default; 0 with -nosimd */
    /* c */
    unsigned features;         /* TARGET_F_* from -mattr and -mcpu */
    const char *cpu;           /* -mcpu=NAME, or NULL */
} Target;

enum {
    TARGET_F_AVX2 = 1,
    TARGET_F_FMA = 2,
    TARGET_F_AVX512F = 4,      /* implies AVX2 and FMA, as in LLVM */
    TARGET_F_NEON = 8          /* AArch64's Advanced SIMD */
};

/* Parse one target: a name, then attributes separated by spaces. Fills the defaults of
 * the kind first. Returns 0, or -1 with ir_fail() naming the bad word. */
int target_parse(const char *spec, Target *t);
/* Apply one more attribute ("-arch=sm_80") to a parsed target. 0, or -1 with ir_fail(). */
int target_attr(Target *t, const char *attr);
int target_is_gpu(const Target *t);
/* Threads per block of kgen's default GPU schedule: the target's -max-threads, at most
 * TARGET_DEFAULT_BLOCK_THREADS (more rarely pays for an elementwise kernel). */
#define TARGET_DEFAULT_BLOCK_THREADS 256
int target_block_threads(const Target *t);
/* The alignment in bytes of a model's arena slices: TARGET_GPU_ARENA_ALIGN on the GPU
 * targets (OpenCL sub-buffers need CL_DEVICE_MEM_BASE_ADDR_ALIGN: 4096 bits at most
 * seen), and for the GPU schedule on C (--schedule=gpu: the plan the GPUs get); else 0,
 * the lowering's default (64). */
#define TARGET_GPU_ARENA_ALIGN 512
int64_t target_arena_align(const Target *t, int gpu_schedule);
/* The f32 lanes the C target's register tiles are shaped for: its features' widest vectors
 * (AVX-512: 16, AVX2: 8, NEON: 4), 8 without any (any CPU); wasm's (SIMD128: 4, with
 * -nosimd too, since it writes the same C); 0 for the other targets. And their name
 * ("avx512f", "avx2", "neon", "any CPU", "simd128") or NULL. */
int target_simd_lanes(const Target *t);
/* The vector registers a register tile may plan for where the target's lanes alone do not
 * say it (wasm: 16, the x86-64 hosts' xmm registers); 0: the schedule's default by lanes. */
int target_simd_regs(const Target *t);
const char *target_simd_name(const Target *t);
/* The C target's default CFLAGS for a runner's Makefile: the flags kgen's speed is measured
 * with. -O3 and the named CPU (-march=x86-64-v3, -mcpu=neoverse-n1), the -mattr features'
 * flags (-mavx2 -mfma), else $(NATIVE): -march=native where the compiler takes it, which
 * the Makefile probes. */
const char *target_c_cflags(const Target *t);

#endif
