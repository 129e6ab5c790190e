/* kgen_runtime.h - the small header-only runtime that kgen copies next to every
 * generated C file.
 *
 * Why header-only: a generated kernel must build with nothing but a C99 compiler and
 * libc (firmware, WASM, a plain `cc kernel.c`), so there is no library to link. Every
 * helper is static inline (KGEN_INLINE), which costs nothing when unused and keeps each
 * kernel file self-contained. Only <stdint.h>, <stddef.h> and <math.h> are included, so
 * freestanding toolchains with a small libm still work (and, in a -fopenmp build only,
 * <omp.h> and <sched.h> for the model function's team of threads).
 *
 * Everything here is prefixed kgen_ / KGEN_ so it cannot clash with user code. The
 * header compiles warning-free as C99 (-Wall -Wextra -pedantic) and as C++.
 */
#ifndef KGEN_RUNTIME_H
#define KGEN_RUNTIME_H

#include <stddef.h>
#include <stdint.h>
#include <math.h>

/* ---------------------------------------------------------------- portability */

/* Generated prototypes use C99 `restrict`; C++ has no such keyword but every major
 * compiler spells it __restrict, so C++ code can include the generated headers. */
#if defined(__cplusplus) && !defined(restrict)
#define restrict __restrict
#endif

/* Placed on the line before a loop the schedule marked `vectorize`: it tells the
 * compiler the iterations are independent (the schedule checked that), which lets it
 * vectorize without runtime alias checks. `unroll 1` keeps gcc from unrolling the
 * (short, constant) loop completely before its loop vectorizer sees it: a register
 * tile's row updates would then reach the SLP vectorizer as scalars, which packs them
 * across the reduction axis with shuffles (measured: MobileNetV2 1.7x slower). */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 8
#define KGEN_VECTORIZE _Pragma("GCC ivdep") _Pragma("GCC unroll 1")
#elif defined(__GNUC__) && !defined(__clang__)
#define KGEN_VECTORIZE _Pragma("GCC ivdep")
#elif defined(__clang__) && (defined(__x86_64__) || defined(__i386__))
/* clang on x86: the same two requests. Left to itself it unrolls such a loop completely
 * before its loop vectorizer runs, and its cost model then finds the 8 scalar lanes (int32
 * indices: a run-time overflow check each) not worth packing: a conv's epilogue of bias
 * and clip ran as scalar compares (MobileNetV2 built with clang 14: 1.3x the time). Where
 * it cannot vectorize a loop (a conversion to f16 without F16C), clang runs the loop as
 * written and warns (-Wpass-failed): the generated files turn that warning off. Not for
 * WebAssembly, where clang's own choice is the faster (emcc 3.1: MobileNetV2 1.2x,
 * EfficientNet-B0 1.1x the time with the requests); other clang targets not measured. */
#define KGEN_VECTORIZE _Pragma("clang loop vectorize(assume_safety) unroll(disable)")
#else
#define KGEN_VECTORIZE
#endif

/* A branch the generated code usually takes (padding's interior, around a vectorized
 * loop): without the hint gcc guesses a chain of bounds checks rarely holds, optimizes the
 * loop inside for size and does not vectorize it. */
#if defined(__GNUC__)
#define KGEN_LIKELY(c) __builtin_expect(!!(c), 1)
#else
#define KGEN_LIKELY(c) (c)
#endif

/* A hint to fetch the cache line holding *p (a chunk of weights needed soon: the schedule's
 * prefetch); it never faults and changes nothing. Without a builtin it costs nothing. */
#if defined(__GNUC__)
#define KGEN_PREFETCH(p) __builtin_prefetch(p)
#else
#define KGEN_PREFETCH(p) ((void)(p))
#endif

/* Placed on the line before a loop the schedule marked `parallel`. Without -fopenmp the
 * loop simply runs serially, so the same file builds everywhere. */
#if defined(_OPENMP)
#define KGEN_PARALLEL_FOR _Pragma("omp parallel for")
#else
#define KGEN_PARALLEL_FOR
#endif

/* One team of threads for a whole model function (kgen's C model function uses these
 * where its kernels are all either one parallel loop or none): under OpenMP, the kernels
 * run inside one parallel region, instead of one region per kernel; each parallel loop
 * shares its iterations among the team (KGEN_TEAM_FOR: `omp for nowait`), thread 0 alone
 * runs a kernel without one (KGEN_TEAM_ONE), and the team meets after each kernel
 * (KGEN_TEAM_SYNC). Two independent kernels without parallel loops (the "beside" pair,
 * below) run one on thread 0 and one on thread 1 (KGEN_TEAM_SIDE(0), KGEN_TEAM_SIDE(1):
 * both on thread 0 in a team of one), and the team meets after the second. The meeting
 * is a counter and a flag that each thread waits on, with the pause instruction where
 * there is one, and after 4096 tries it gives its core away (sched_yield) while it waits,
 * which matters where threads outnumber free cores. Opening
 * and closing a region cost 2.5 us in libgomp on a 2-core VM, its barrier 1.2 us, this
 * meeting about 0.3: MobileNetV3-small on 2 threads 0.64 -> 0.53 ms, ShuffleNetV2 1.39 ->
 * 1.16 ms. Without OpenMP, or in a profiling build (each kernel timed alone), they are
 * nothing: the kernels run one after the other, each parallel loop on its own region. */
#if defined(_OPENMP) && !defined(KGEN_PROFILE)
#include <omp.h>
#if defined(__unix__) || defined(__APPLE__)
#include <sched.h>
#define KGEN_TEAM_YIELD_() sched_yield()
#else
#define KGEN_TEAM_YIELD_() ((void)0)
#endif
#if defined(__x86_64__) || defined(__i386__)
#define KGEN_TEAM_PAUSE_() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define KGEN_TEAM_PAUSE_() __asm__ __volatile__("yield")
#else
#define KGEN_TEAM_PAUSE_() ((void)0)
#endif
typedef struct {
    int arrived;   /* threads at the current meeting */
    int phase;     /* flips when the last one arrives */
} kgen_team;
#if defined(__GNUC__)
/* a team member's meeting: *phase is its own copy of the team's phase */
static inline void kgen_team_sync(kgen_team *t, int *phase)
{
    int next = *phase = !*phase;
    if (__atomic_add_fetch(&t->arrived, 1, __ATOMIC_ACQ_REL) == omp_get_num_threads()) {
        __atomic_store_n(&t->arrived, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&t->phase, next, __ATOMIC_RELEASE);
        return;
    }
    for (long spins = 0; __atomic_load_n(&t->phase, __ATOMIC_ACQUIRE) != next; spins++) {
        if (spins < 4096)
            KGEN_TEAM_PAUSE_();
        else
            KGEN_TEAM_YIELD_();
    }
}
#define KGEN_TEAM_SYNC(t) kgen_team_sync(&t, &t##_phase)
#else
#define KGEN_TEAM_SYNC(t) _Pragma("omp barrier")
#endif
#define KGEN_TEAM(t) kgen_team t = {0, 0}; _Pragma("omp parallel")
#define KGEN_TEAM_MEMBER(t) int t##_phase = 0; (void)t##_phase
#define KGEN_TEAM_ONE _Pragma("omp master")
#define KGEN_TEAM_FOR _Pragma("omp for nowait")
#define KGEN_TEAM_SIDE(i) if (omp_get_thread_num() == (i) % omp_get_num_threads())
#else
#define KGEN_TEAM(t)
#define KGEN_TEAM_MEMBER(t) ((void)0)
#define KGEN_TEAM_SYNC(t) ((void)0)
#define KGEN_TEAM_ONE
#define KGEN_TEAM_FOR KGEN_PARALLEL_FOR
#define KGEN_TEAM_SIDE(i)
#endif

/* Around two independent model steps that have no parallel loop of their own (the two
 * directions of a bidirectional LSTM), in a model function without a team (above): under
 * -fopenmp each runs on a thread of its own, otherwise one after the other. A profiling
 * build (-DKGEN_PROFILE) runs them one after the other too, so that each is timed alone. */
#if defined(_OPENMP) && !defined(KGEN_PROFILE)
#define KGEN_SIDE_BY_SIDE _Pragma("omp parallel sections")
#define KGEN_SIDE _Pragma("omp section")
#else
#define KGEN_SIDE_BY_SIDE
#define KGEN_SIDE
#endif

/* On the function a parallel loop's body is printed as (NAME_body, called once per
 * iteration). gcc and clang compile it as a function of its own, not inlined into the
 * loop that calls it: under OpenMP, the region they outline for the loop gets weaker alias
 * facts (gcc kept the register tiles' accumulators in memory there: ResNet-18 on one
 * thread 1.3x slower than built without -fopenmp); without OpenMP, gcc 12 inlined each
 * body into its kernel and that into the model function, where the same tiles spilled.
 * And gcc does not turn its loops into memset and memcpy calls (the attribute glibc uses
 * for the same purpose): a register tile's zero fill and its copy to the output become
 * library calls on the local array, which then lives in memory instead of registers
 * (ShuffleNetV2's 1x1 conv over 7x7: each multiply-add waited on a store and a reload).
 * Measured on one thread, gcc 12, AVX2: ResNet-18 56.6 -> 47.0 ms, ShuffleNetV2 5.8 -> 5.5. */
#if defined(__GNUC__) && !defined(__clang__)
#define KGEN_PARALLEL_BODY __attribute__((noinline, optimize("no-tree-loop-distribute-patterns")))
#elif defined(__GNUC__)
#define KGEN_PARALLEL_BODY __attribute__((noinline))
#else
#define KGEN_PARALLEL_BODY
#endif

/* On a model's kernels (or their parallel loops' bodies) that call no broadcasting
 * micro-kernel (kgen_fma_bcast_f32xW; the elementwise ones, a depthwise conv's, may). gcc's
 * tuning for AVX2 cores of 128-bit units (-march=native on a Zen 1: znver1) vectorizes
 * their 8-lane loops in two 128-bit halves, which doubles the registers a tile of them
 * holds: a depthwise conv's 8 columns of an 8-channel block took 16 halves in 16
 * registers and spilled at every tap. These functions ask for 256-bit vectors (depthwise
 * 3x3 over 56x56x144: 0.58 -> 0.34 ms, gcc 12 on a Zen 1); the kernels whose tiles
 * broadcast through kgen_ukernels.h (256-bit already) keep the tuning's choice for the
 * rest of their loops (their epilogues: mobilenet_v2 0.96x its time with them kept, 0.98x
 * with them wide too).
 * A no-op where the tuning prefers 256 bits anyway; not with AVX-512, whose tunings choose
 * 256 or 512 themselves; not clang, whose target attribute has no such option. */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 8 && defined(__AVX2__) && !defined(__AVX512F__)
#define KGEN_WIDE_VECTORS __attribute__((target("prefer-vector-width=256")))
#else
#define KGEN_WIDE_VECTORS
#endif

/* Placed around each kernel call of a generated model function, with the kernel's index
 * in the model and its name. They compile to nothing unless the program is built with
 * -DKGEN_PROFILE: then they call kgen_profile_begin() and kgen_profile_end(), which the
 * program supplies (the runner, kgen_main.h, does: --profile N prints each kernel's median
 * time). A program may instead define KGEN_PROFILE_BEGIN and KGEN_PROFILE_END itself
 * before including this header. */
#if defined(KGEN_PROFILE) && !defined(KGEN_PROFILE_BEGIN)
#ifdef __cplusplus
extern "C" {
#endif
void kgen_profile_begin(int kernel);
void kgen_profile_end(int kernel, const char *name);
#ifdef __cplusplus
}
#endif
#define KGEN_PROFILE_BEGIN(kernel) kgen_profile_begin(kernel)
#define KGEN_PROFILE_END(kernel, name) kgen_profile_end(kernel, name)
#endif
#if !defined(KGEN_PROFILE_BEGIN)
#define KGEN_PROFILE_BEGIN(kernel) ((void)0)
#endif
#if !defined(KGEN_PROFILE_END)
#define KGEN_PROFILE_END(kernel, name) ((void)0)
#endif

/* Every helper is KGEN_INLINE: static (private to each including file) and inline. The
 * unused attribute keeps clang quiet when this header is compiled on its own. */
#if defined(__CUDACC__)
#define KGEN_INLINE static __host__ __device__ inline
#elif defined(__GNUC__)
#define KGEN_INLINE static inline __attribute__((unused))
#else
#define KGEN_INLINE static inline
#endif
/* The float helpers that kernels call per element (kgen_expf, kgen_sigmoidf, kgen_min_f32,
 * ...) are always inlined: a loop over a vector of them vectorizes only so, and in a
 * kernel of many such loops gcc stops inlining at its growth limits and calls the scalar
 * function per element (EfficientNet-B0's 1x1 convs over 80 channels with their SiLU ran
 * 0.49 ms for 7.5 M MACs, with 14 calls of kgen_sigmoidf in the kernel) */
#if defined(__GNUC__) && !defined(__CUDACC__)
#define KGEN_INLINE_MATH static inline __attribute__((unused, always_inline))
#else
#define KGEN_INLINE_MATH KGEN_INLINE
#endif

/* Local arrays are aligned to a cache line so vector loads on them never split lines. */
#if defined(__GNUC__)
#define KGEN_ALIGN(n) __attribute__((aligned(n)))
#else
#define KGEN_ALIGN(n)
#endif

/* ---------------------------------------------------------------- tensors (DLPack ABI) */

/* The descriptor the NAME_tensors() entry points take. Its layout is field for field the
 * one of DLPack's DLTensor (dlpack.h, v0.x and v1.x): a framework that already hands out
 * DLTensor pointers (PyTorch, TVM, JAX, ...) can pass them straight through, with a cast
 * if dlpack.h was included too. The codes below are DLPack's values. */
#define KGEN_DEVICE_CPU 1
#define KGEN_DEVICE_CUDA 2
#define KGEN_DEVICE_CUDA_HOST 3
#define KGEN_DEVICE_OPENCL 4
#define KGEN_DEVICE_METAL 8
#define KGEN_DEVICE_CUDA_MANAGED 13

#define KGEN_DTYPE_INT 0
#define KGEN_DTYPE_UINT 1
#define KGEN_DTYPE_FLOAT 2
#define KGEN_DTYPE_BFLOAT 4
#define KGEN_DTYPE_FLOAT8_E4M3FN 10     /* DLPack 1.1's float8 codes (bits 8) */
#define KGEN_DTYPE_FLOAT8_E4M3FNUZ 11
#define KGEN_DTYPE_FLOAT8_E5M2 12
#define KGEN_DTYPE_FLOAT8_E5M2FNUZ 13
#define KGEN_DTYPE_BOOL 6

typedef struct {
    int32_t device_type;    /* KGEN_DEVICE_*; DLPack's enum has the size of an int32 */
    int32_t device_id;
} kgen_device;

typedef struct {
    uint8_t code;           /* KGEN_DTYPE_* */
    uint8_t bits;           /* 8, 16, 32, 64 */
    uint16_t lanes;         /* 1 for every tensor kgen reads or writes */
} kgen_dtype;

typedef struct {
    void *data;             /* the allocation; elements start at data + byte_offset */
    kgen_device device;
    int32_t ndim;
    kgen_dtype dtype;
    int64_t *shape;         /* ndim extents */
    int64_t *strides;       /* ndim strides in elements, or NULL for compact row-major */
    uint64_t byte_offset;
} kgen_tensor;

/* What a generated model says about each of its inputs and outputs, for runners and
 * frameworks: the ONNX name, the element type, the static shape, and the position of the
 * value among the model's graph inputs (or outputs), which can differ from the position
 * in the generated signature when an input was frozen into a constant. */
#define KGEN_MAX_DIMS 8
typedef struct {
    const char *name;
    kgen_dtype dtype;
    int32_t ndim;
    int64_t shape[KGEN_MAX_DIMS];   /* -1: a dim decided at run time (kgen_dim_info) */
    int32_t graph_index;
} kgen_value_info;

/* A dim a model takes at run time (kgen --input-shape x=1,3,32..224,W or --dim W=LO..HI):
 * its name, its range and where NAME_tensors() reads it (dim `dim` of input `input`). */
typedef struct {
    const char *name;
    int64_t lo, hi;
    int32_t input, dim;
} kgen_dim_info;

/* Name the struct DLTensor too, unless dlpack.h got there first (include dlpack.h BEFORE
 * this header to use its own type; the two layouts are identical, so a cast suffices). */
#if !defined(DLPACK_VERSION) && !defined(DLPACK_EXTERN_C) && !defined(DLPACK_MAJOR_VERSION)
typedef kgen_tensor DLTensor;
#endif

/* ---------------------------------------------------------------- status codes */

/* Every generated function returns one of these: a kernel cannot print or abort on a
 * microcontroller, so a bad call is reported to the caller instead. */
#define KGEN_OK 0
#define KGEN_ERR_NARGS 1      /* wrong number of tensors */
#define KGEN_ERR_DTYPE 2      /* dtype code, bits or lanes differ */
#define KGEN_ERR_NDIM 3       /* rank differs */
#define KGEN_ERR_SHAPE 4      /* an extent differs */
#define KGEN_ERR_STRIDES 5    /* not the compact row-major layout the kernel assumes */
#define KGEN_ERR_ALIGN 6      /* data not aligned to its element size */
#define KGEN_ERR_NULL 7       /* a NULL tensor, data or shape pointer */
#define KGEN_ERR_DEVICE 8     /* memory the kernel cannot address (e.g. GPU for C) */

KGEN_INLINE const char *kgen_status_str(int status)
{
    switch (status) {
    case KGEN_OK: return "ok";
    case KGEN_ERR_NARGS: return "wrong number of tensors";
    case KGEN_ERR_DTYPE: return "wrong dtype";
    case KGEN_ERR_NDIM: return "wrong number of dimensions";
    case KGEN_ERR_SHAPE: return "wrong shape";
    case KGEN_ERR_STRIDES: return "strides are not compact row-major";
    case KGEN_ERR_ALIGN: return "data is misaligned";
    case KGEN_ERR_NULL: return "NULL pointer";
    case KGEN_ERR_DEVICE: return "device error (a GPU call failed, see stderr) or memory the kernel cannot address";
    default: return "unknown status";
    }
}

/* Check one tensor against what a kernel parameter expects. Strides of extent-1
 * dimensions are ignored: they never move the address, and frameworks fill them with
 * arbitrary values. */
KGEN_INLINE int kgen_check_tensor(const kgen_tensor *t, int32_t device_type, uint8_t code,
                                    uint8_t bits, int32_t ndim, const int64_t *shape,
                                    const int64_t *strides)
{
    int32_t i;
    if (!t)
        return KGEN_ERR_NULL;
    if (t->device.device_type != device_type &&
        !(device_type == KGEN_DEVICE_CPU && (t->device.device_type == KGEN_DEVICE_CUDA_HOST ||
                                             t->device.device_type == KGEN_DEVICE_CUDA_MANAGED)))
        return KGEN_ERR_DEVICE;
    if (t->dtype.code != code || t->dtype.bits != bits || t->dtype.lanes != 1)
        return KGEN_ERR_DTYPE;
    if (t->ndim != ndim)
        return KGEN_ERR_NDIM;
    if (ndim > 0 && !t->shape)
        return KGEN_ERR_NULL;
    for (i = 0; i < ndim; i++)
        if (t->shape[i] != shape[i])
            return KGEN_ERR_SHAPE;
    if (t->strides)
        for (i = 0; i < ndim; i++)
            if (shape[i] != 1 && t->strides[i] != strides[i])
                return KGEN_ERR_STRIDES;
    if (!t->data)
        return KGEN_ERR_NULL;
    if (bits >= 8 && ((uintptr_t)t->data + (uintptr_t)t->byte_offset) % (uintptr_t)(bits / 8) != 0)
        return KGEN_ERR_ALIGN;
    return KGEN_OK;
}

/* ---------------------------------------------------------------- arena */

/* Callers without malloc (firmware) carve the workspace and tensors out of one static
 * block. kgen_arena_alloc returns NULL when the block is full instead of failing hard. */
typedef struct {
    unsigned char *base;
    size_t size, used;
} kgen_arena;

/* Round x up to a multiple of a (a power of two). */
#define KGEN_ALIGN_UP(x, a) (((x) + ((size_t)(a) - 1)) & ~((size_t)(a) - 1))

KGEN_INLINE void kgen_arena_init(kgen_arena *a, void *base, size_t size)
{
    a->base = (unsigned char *)base;
    a->size = base ? size : 0;
    a->used = 0;
}

/* align: a power of two (0 means 1). The address, not just the offset, is aligned, so
 * the block itself may have any alignment. */
KGEN_INLINE void *kgen_arena_alloc(kgen_arena *a, size_t bytes, size_t align)
{
    uintptr_t start, aligned;
    size_t pad;
    if (align == 0)
        align = 1;
    if (!a->base || (align & (align - 1)) != 0)
        return NULL;
    start = (uintptr_t)(a->base + a->used);
    aligned = (start + (uintptr_t)(align - 1)) & ~(uintptr_t)(align - 1);
    pad = (size_t)(aligned - start);
    if (pad > a->size - a->used || bytes > a->size - a->used - pad)
        return NULL;
    a->used += pad + bytes;
    return a->base + (a->used - bytes);
}

/* KGEN_KERNEL_HELPERS_BEGIN: from here to KGEN_KERNEL_HELPERS_END the helpers that
 * generated kernels call. kgen also copies this part into OpenCL and Metal sources after
 * a small head (kgen_opencl.h, kgen_metal.h) that supplies the stdint names, KGEN_INLINE
 * and, where the device has no doubles, KGEN_NO_F64: keep it in the common subset of C99,
 * OpenCL C and the Metal Shading Language. */

/* ---------------------------------------------------------------- half precision */

/* f16 tensors are stored as uint16_t bit patterns and computed in float: C99 has no half
 * type, and integer code gives the same bits on every target. Both conversions are exact
 * IEEE binary16: round to nearest even, subnormals, infinities and NaNs (kept quiet). */
#ifndef KGEN_HAVE_BITCAST   /* OpenCL and Metal heads define these with their own casts */
KGEN_INLINE_MATH uint32_t kgen_f32_bits(float f)
{
    union { float f; uint32_t u; } v;
    v.f = f;
    return v.u;
}

KGEN_INLINE_MATH float kgen_bits_f32(uint32_t u)
{
    union { float f; uint32_t u; } v;
    v.u = u;
    return v.f;
}

#ifndef KGEN_NO_F64   /* (BitCast between f64 and 64-bit integers) */
KGEN_INLINE uint64_t kgen_f64_bits(double f)
{
    union { double f; uint64_t u; } v;
    v.f = f;
    return v.u;
}

KGEN_INLINE double kgen_bits_f64(uint64_t u)
{
    union { double f; uint64_t u; } v;
    v.u = u;
    return v.f;
}
#endif
#endif

KGEN_INLINE float kgen_f16_to_f32(uint16_t h)
{
    uint32_t sign = ((uint32_t)h & 0x8000u) << 16;
    uint32_t exp = ((uint32_t)h >> 10) & 0x1fu;
    uint32_t man = (uint32_t)h & 0x3ffu;
    uint32_t e;
    if (exp == 0x1fu)                       /* inf, nan */
        return kgen_bits_f32(sign | 0x7f800000u | (man << 13));
    if (exp != 0)                           /* normal: rebias 15 -> 127 */
        return kgen_bits_f32(sign | ((exp + 112u) << 23) | (man << 13));
    if (man == 0)                           /* signed zero */
        return kgen_bits_f32(sign);
    e = 113u;                               /* subnormal: normalize the mantissa */
    while (!(man & 0x400u)) {
        man <<= 1;
        e--;
    }
    return kgen_bits_f32(sign | (e << 23) | ((man & 0x3ffu) << 13));
}

KGEN_INLINE uint16_t kgen_f32_to_f16(float f)
{
    uint32_t x = kgen_f32_bits(f);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t exp = (x >> 23) & 0xffu;
    uint32_t man = x & 0x7fffffu;
    int32_t e = (int32_t)exp - 112;         /* the half exponent field */
    uint32_t h, rem, halfway;
    int shift;
    if (exp == 0xffu)                       /* inf stays inf; nan stays a (quiet) nan */
        return (uint16_t)(sign | 0x7c00u | (man ? 0x200u | (man >> 13) : 0u));
    if (e >= 31)                            /* too large: overflows to inf */
        return (uint16_t)(sign | 0x7c00u);
    if (e <= 0) {                           /* a half subnormal, or zero */
        if (e < -10)                        /* below half the smallest subnormal */
            return (uint16_t)sign;
        man |= 0x800000u;
        shift = 14 - e;                     /* 14..24 */
        h = man >> shift;
        rem = man & ((1u << shift) - 1u);
        halfway = 1u << (shift - 1);
    } else {
        h = ((uint32_t)e << 10) | (man >> 13);
        rem = man & 0x1fffu;
        halfway = 0x1000u;
    }
    if (rem > halfway || (rem == halfway && (h & 1u)))
        h++;                                /* a carry into the exponent is still right */
    return (uint16_t)(sign | h);
}

/* bf16 (the top half of an f32) and ONNX's float8 types, stored as bit patterns and
 * computed in float like f16. f32 -> bf16 and f32 -> float8 round to nearest even; a
 * float8 value too large for the type becomes NaN (inf for e5m2): ONNX's saturate=0.
 * The default saturate=1 is a clamp to the largest finite value, which the generated
 * code computes before the conversion. FN types have no inf and one NaN per sign
 * (S.1111.111); FNUZ types have neither inf nor -0, and 0x80 is their only NaN. */
KGEN_INLINE float kgen_bf16_to_f32(uint16_t h) { return kgen_bits_f32((uint32_t)h << 16); }

KGEN_INLINE uint16_t kgen_f32_to_bf16(float f)
{
    uint32_t x = kgen_f32_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u)    /* nan stays a (quiet) nan */
        return (uint16_t)((x >> 16) | 0x40u);
    return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

/* kind: 0 IEEE-like (e5m2: inf and NaNs in the top exponent), 1 FN, 2 FNUZ */
KGEN_INLINE float kgen_f8_to_f32_(uint8_t v, uint32_t m, uint32_t bias, int kind)
{
    uint32_t sign = ((uint32_t)v & 0x80u) << 24;
    uint32_t exp = ((uint32_t)v & 0x7fu) >> m;
    uint32_t man = (uint32_t)v & ((1u << m) - 1u);
    uint32_t e;
    if (kind == 2 && v == 0x80u)
        return kgen_bits_f32(0x7fc00000u);
    if (kind == 1 && (v & 0x7fu) == 0x7fu)
        return kgen_bits_f32(sign | 0x7fc00000u);
    if (kind == 0 && exp == (0x7fu >> m))   /* inf, nan */
        return kgen_bits_f32(sign | 0x7f800000u | (man << (23u - m)));
    if (exp != 0)
        return kgen_bits_f32(sign | ((exp + 127u - bias) << 23) | (man << (23u - m)));
    if (man == 0)
        return kgen_bits_f32(sign);
    e = 128u - bias;                        /* subnormal: normalize the mantissa */
    while (!(man & (1u << m))) {
        man <<= 1;
        e--;
    }
    return kgen_bits_f32(sign | (e << 23) | ((man & ((1u << m) - 1u)) << (23u - m)));
}

/* maxcode: the bits of the largest finite magnitude */
KGEN_INLINE uint8_t kgen_f32_to_f8_(float f, uint32_t m, uint32_t bias, int kind, uint32_t maxcode)
{
    uint32_t x = kgen_f32_bits(f);
    uint32_t sign = (x >> 24) & 0x80u;
    uint32_t exp = (x >> 23) & 0xffu;
    uint32_t man = x & 0x7fffffu;
    uint32_t nan = kind == 2 ? 0x80u : sign | (kind == 1 ? 0x7fu : 0x7eu);
    uint32_t over = kind == 0 ? sign | 0x7cu : nan;
    uint32_t zero = kind == 2 ? 0u : sign;
    int32_t e = (int32_t)exp - 127 + (int32_t)bias;  /* the float8 exponent field */
    uint32_t h, rem, halfway, shift;
    if (exp == 0xffu)
        return (uint8_t)(man ? nan : over);
    if (e <= 0) {                           /* a subnormal, or zero */
        if (e < -24)
            return (uint8_t)zero;
        shift = (uint32_t)(24 - e) - m;
        if (shift > 25u)                    /* below half the smallest subnormal */
            return (uint8_t)zero;
        man |= 0x800000u;
        h = man >> shift;
        rem = man & ((1u << shift) - 1u);
        halfway = 1u << (shift - 1u);
    } else {
        h = ((uint32_t)e << m) | (man >> (23u - m));
        rem = man & ((1u << (23u - m)) - 1u);
        halfway = 1u << (22u - m);
    }
    if (rem > halfway || (rem == halfway && (h & 1u)))
        h++;
    if (h > maxcode)
        return (uint8_t)over;
    return (uint8_t)(h ? sign | h : zero);
}

KGEN_INLINE float kgen_f8e4m3fn_to_f32(uint8_t v) { return kgen_f8_to_f32_(v, 3u, 7u, 1); }
KGEN_INLINE float kgen_f8e4m3fnuz_to_f32(uint8_t v) { return kgen_f8_to_f32_(v, 3u, 8u, 2); }
KGEN_INLINE float kgen_f8e5m2_to_f32(uint8_t v) { return kgen_f8_to_f32_(v, 2u, 15u, 0); }
KGEN_INLINE float kgen_f8e5m2fnuz_to_f32(uint8_t v) { return kgen_f8_to_f32_(v, 2u, 16u, 2); }
KGEN_INLINE uint8_t kgen_f32_to_f8e4m3fn(float f) { return kgen_f32_to_f8_(f, 3u, 7u, 1, 0x7eu); }
KGEN_INLINE uint8_t kgen_f32_to_f8e4m3fnuz(float f) { return kgen_f32_to_f8_(f, 3u, 8u, 2, 0x7fu); }
KGEN_INLINE uint8_t kgen_f32_to_f8e5m2(float f) { return kgen_f32_to_f8_(f, 2u, 15u, 0, 0x7bu); }
KGEN_INLINE uint8_t kgen_f32_to_f8e5m2fnuz(float f) { return kgen_f32_to_f8_(f, 2u, 16u, 2, 0x7fu); }

/* ---------------------------------------------------------------- math helpers */

/* Functions that libm lacks, spelled once here so the printer emits one readable call. */
/* e^x, relative error under 1e-7 for normal results, in straight-line code: a loop of
 * exponentials (a Softmax's, an Exp's) vectorizes, where a call to
 * libm's expf per element does not (ViT-B/16's softmax took 5 ms a layer so). x clamped
 * to [-103.97, 88.72] (beyond them e^x is 0 or overflows) is n ln 2 + r, n = round(x /
 * ln 2) (the 1.5 * 2^23 rounding trick) and |r| <= ln 2 / 2 (ln 2 in two parts, Cody and
 * Waite), e^r by Cephes' degree-7 polynomial and 2^n put in the exponent bits of two
 * factors of normal floats, so the results down to the subnormals are right. The clamp
 * and the edge cases are integer operations on the bits, computed whatever the input (a
 * float comparison, or a select that lets gcc sink the arithmetic into a branch, stops
 * its if-conversion under the default -ftrapping-math): above 88.72 the result is inf,
 * below -103.97 zero, NaN stays NaN. */
KGEN_INLINE_MATH float kgen_expf(float x)
{
    uint32_t bits = kgen_f32_bits(x), mag = bits & 0x7fffffffu, neg = bits >> 31;
    uint32_t hi = 0x42b17218u, lo = 0x42cff1b5u; /* 88.7228394f, 103.972084f */
    uint32_t lim = hi ^ ((hi ^ lo) & (0u - neg));
    float z = kgen_bits_f32((mag > lim ? lim : mag) | (bits & 0x80000000u));
    float t = z * 1.44269504f + 12582912.0f;
    float n = t - 12582912.0f;
    float r = z - n * 0.693359375f;
    r = r + n * 2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    int32_t k = (int32_t)(kgen_f32_bits(t) - 0x4b400000u), k1 = k / 2, k2 = k - k1;
    float y = p * kgen_bits_f32((uint32_t)(k1 + 127) << 23) * kgen_bits_f32((uint32_t)(k2 + 127) << 23);
    uint32_t inf = 0u - ((uint32_t)(mag > hi) & (neg ^ 1u)), zero = 0u - ((uint32_t)(mag > lo) & neg);
    uint32_t nan = 0u - (uint32_t)(mag > 0x7f800000u);
    uint32_t out = (kgen_f32_bits(y) & ~(inf | zero)) | (0x7f800000u & inf);
    return kgen_bits_f32((out & ~nan) | (bits & nan));
}
/* 1 / (1 + e^-x), relative error under 2e-7, in straight-line code: a loop of sigmoids
 * (Sigmoid, SiLU's x * sigmoid(x), a squeeze-excitation gate) vectorizes, where a call to
 * libm's expf per element does not (EfficientNet-B0's SiLUs: 74 of its 110 ms). e^z, z = -x
 * clamped to [-87, 87], is 2^n * e^r with n = round(z / ln 2) (the 1.5 * 2^23 rounding
 * trick) and |r| <= ln 2 / 2 (ln 2 in two parts, Cody and Waite), e^r by Cephes' degree-7
 * polynomial and 2^n put in the exponent bits. The clamp is an integer minimum of the
 * magnitude's bits, computed whatever the input (a float comparison, or a select that lets
 * gcc sink the arithmetic into a branch, stops its if-conversion under the default
 * -ftrapping-math). The magnitude is offset first so that a NaN's wraps negative and the
 * signed minimum keeps it: NaN stays NaN through the arithmetic, with no mask at the end.
 * Below -87 the result is 1.6e-38 (the true sigmoid is smaller still, an absolute error
 * under 1.7e-38); above 87 it rounds to 1. Without the masks a SiLU ran 1.63 ns an element
 * against 1.91 with them (Zen 1, AVX2, gcc 12). Its own code, not 1 / (1 + kgen_expf(-x)):
 * with kgen_expf's wider clamp and subnormal scaling EfficientNet-B0 ran 26.8 ms against
 * 16.5 with this (one thread, gcc 12, AVX2). */
KGEN_INLINE_MATH float kgen_sigmoidf(float x)
{
    uint32_t bits = kgen_f32_bits(x), off = 0x007fffffu; /* 0x7f800001 + off wraps to 2^31 */
    int32_t mag = (int32_t)((bits & 0x7fffffffu) + off), lim = (int32_t)(0x42ae0000u + off); /* 87.0f */
    float z = kgen_bits_f32(((uint32_t)(mag < lim ? mag : lim) - off) | (~bits & 0x80000000u));
    float t = z * 1.44269504f + 12582912.0f;
    float n = t - 12582912.0f;
    float r = z - n * 0.693359375f;
    r = r + n * 2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    return 1.0f / (1.0f + p * kgen_bits_f32((kgen_f32_bits(t) - 0x4b400000u + 127u) << 23));
}
/* erf(x), absolute error under 4e-7 (relative under 7e-7), in straight-line code for the
 * same reason: GELU's x * (erf(x / sqrt 2) + 1) / 2 after a transformer's matmul vectorizes
 * with it, where libm's erff per element took a third of the matmul's time (ViT-B/16).
 * erf is odd and within 4e-8 of +-1 beyond |x| = 4: x clamped to [-4, 4] (its magnitude's
 * bits, as above), then x P(x^2) / Q(x^2), a rational fit of degrees 6 and 4 in x^2 made
 * for kgen (weighted least squares towards minimax on [0, 4]), the magnitude at most 1. */
KGEN_INLINE_MATH float kgen_erff(float x)
{
    uint32_t bits = kgen_f32_bits(x), mag = bits & 0x7fffffffu, lim = 0x40800000u; /* 4.0f */
    float c = kgen_bits_f32((mag > lim ? lim : mag) | (bits & 0x80000000u));
    float z = c * c;
    float p = 1.92110407e-8f;
    p = p * z - 1.98975346e-6f;
    p = p * z + 1.55491166e-4f;
    p = p * z + 4.29195683e-3f;
    p = p * z + 5.2430689e-2f;
    p = p * z + 2.13924699e-1f;
    p = p * z + 1.12837868f;
    float q = 1.09770542e-3f;
    q = q * z + 1.55491771e-2f;
    q = q * z + 1.20791185e-1f;
    q = q * z + 5.22913509e-1f;
    q = q * z + 1.0f;
    uint32_t y = kgen_f32_bits(c * p / q) & 0x7fffffffu, one = 0x3f800000u; /* 1.0f */
    y = (y > one ? one : y) | (bits & 0x80000000u);
    uint32_t nan = 0u - (uint32_t)(mag > 0x7f800000u);
    return kgen_bits_f32((y & ~nan) | (bits & nan));
}
/* tanh(x), relative error under 2e-7 (1.3e-7 over every 97th float), in straight-line
 * code: an LSTM's or GRU's gates and a Tanh after a matmul vectorize with it, where libm's
 * tanhf per element does not (a CRNN's BiLSTM steps 2.6 -> 1.8 ms each). tanh is
 * odd: on |x| < 0.625, x + x^3 P(x^2) (Cephes' degree-4 fit); above, 1 - 2 / (e^2|x| + 1)
 * with kgen_expf, |x| clamped to 9 (tanh rounds to 1 beyond); both are computed and one
 * taken on the bits (as above: no float comparison), the sign put back, NaN kept. */
KGEN_INLINE_MATH float kgen_tanhf(float x)
{
    uint32_t bits = kgen_f32_bits(x), mag = bits & 0x7fffffffu, lim = 0x41100000u; /* 9.0f */
    float a = kgen_bits_f32(mag > lim ? lim : mag);
    float z = a * a;
    float p = -5.70498872745e-3f;
    p = p * z + 2.06390887954e-2f;
    p = p * z - 5.37397155531e-2f;
    p = p * z + 1.33314422036e-1f;
    p = p * z - 3.33332819422e-1f;
    float small = p * z * a + a;
    float big = 1.0f - 2.0f / (kgen_expf(a + a) + 1.0f);
    uint32_t wide = 0u - (uint32_t)(mag >= 0x3f200000u); /* 0.625f */
    uint32_t y = (kgen_f32_bits(big) & wide) | (kgen_f32_bits(small) & ~wide);
    uint32_t nan = 0u - (uint32_t)(mag > 0x7f800000u);
    return kgen_bits_f32(((y | (bits & 0x80000000u)) & ~nan) | (bits & nan));
}
#ifndef KGEN_NO_F64
KGEN_INLINE double kgen_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }
#endif
KGEN_INLINE_MATH float kgen_rsqrtf(float x) { return 1.0f / sqrtf(x); }
#ifndef KGEN_NO_F64
KGEN_INLINE double kgen_rsqrt(double x) { return 1.0 / sqrt(x); }
#endif

/* Floor modulo for floats (ONNX Mod with fmod=0, Python %): the sign follows b. */
KGEN_INLINE_MATH float kgen_floormodf(float a, float b)
{
    float r = fmodf(a, b);
    return (r != 0.0f && ((r < 0.0f) != (b < 0.0f))) ? r + b : r;
}

#ifndef KGEN_NO_F64
KGEN_INLINE double kgen_floormod(double a, double b)
{
    double r = fmod(a, b);
    return (r != 0.0 && ((r < 0.0) != (b < 0.0))) ? r + b : r;
}
#endif

/* Float min/max propagate NaN (ONNX Min/Max, numpy): fminf would drop it. a where a is
 * NaN or smaller (larger), else b (so b when equal, and b's NaN): the f32 ones as a mask
 * select on the bits, without a branch, so that an epilogue such as HardSwish's
 * x * max(0, min(1, x / 6 + 0.5)) on a conv's accumulator still vectorizes (nested
 * float selects there kept gcc from if-converting the loop). */
KGEN_INLINE_MATH float kgen_select_f32_(uint32_t take_a, float a, float b)
{
    uint32_t m = 0u - take_a;
    return kgen_bits_f32((kgen_f32_bits(a) & m) | (kgen_f32_bits(b) & ~m));
}
KGEN_INLINE_MATH float kgen_min_f32(float a, float b)
{
    return kgen_select_f32_((uint32_t)(a < b) | (uint32_t)(a != a), a, b);
}
KGEN_INLINE_MATH float kgen_max_f32(float a, float b)
{
    return kgen_select_f32_((uint32_t)(a > b) | (uint32_t)(a != a), a, b);
}
/* The same against a bound k that is not NaN (a ReLU's 0, a Clip's 0 and 6), as the printer
 * emits them for a constant bound: a NaN in a is still kept (no comparison with it holds),
 * and k's own NaN test goes, so a vectorized loop does a compare and a blend where the
 * general ones take four (gcc 12: compare, unordered compare, or, blend). Ties give k, as
 * above (max(-0, 0) is 0). */
KGEN_INLINE_MATH float kgen_min_f32k(float a, float k)
{
    return kgen_select_f32_((uint32_t)(k <= a), k, a);
}
KGEN_INLINE_MATH float kgen_max_f32k(float a, float k)
{
    return kgen_select_f32_((uint32_t)(k >= a), k, a);
}
#ifndef KGEN_NO_F64
KGEN_INLINE double kgen_min_f64(double a, double b)
{
    return a != a ? a : b != b ? b : a < b ? a : b;
}
KGEN_INLINE double kgen_max_f64(double a, double b)
{
    return a != a ? a : b != b ? b : a > b ? a : b;
}
#endif

/* Integer min/max: smaller types are promoted to int and use the i32 ones. */
KGEN_INLINE int32_t kgen_min_i32(int32_t a, int32_t b) { return a < b ? a : b; }
KGEN_INLINE int32_t kgen_max_i32(int32_t a, int32_t b) { return a > b ? a : b; }
KGEN_INLINE int64_t kgen_min_i64(int64_t a, int64_t b) { return a < b ? a : b; }
KGEN_INLINE int64_t kgen_max_i64(int64_t a, int64_t b) { return a > b ? a : b; }
KGEN_INLINE uint32_t kgen_min_u32(uint32_t a, uint32_t b) { return a < b ? a : b; }
KGEN_INLINE uint32_t kgen_max_u32(uint32_t a, uint32_t b) { return a > b ? a : b; }
KGEN_INLINE uint64_t kgen_min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }
KGEN_INLINE uint64_t kgen_max_u64(uint64_t a, uint64_t b) { return a > b ? a : b; }

/* Index arithmetic rounds towards minus infinity (split/fuse of negative offsets, ONNX
 * Mod on ints), while C's / and % truncate towards zero: correct the truncated result
 * when the signs differ and the division is inexact. */
KGEN_INLINE int32_t kgen_floordiv_i32(int32_t a, int32_t b)
{
    int32_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

KGEN_INLINE int32_t kgen_floormod_i32(int32_t a, int32_t b)
{
    int32_t r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

KGEN_INLINE int64_t kgen_floordiv_i64(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

KGEN_INLINE int64_t kgen_floormod_i64(int64_t a, int64_t b)
{
    int64_t r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

/* Integer abs through unsigned arithmetic: abs(INT_MIN) wraps to INT_MIN instead of
 * being undefined behaviour (the result is converted back like a two's complement cast). */
KGEN_INLINE int32_t kgen_abs_i32(int32_t x) { return x < 0 ? (int32_t)(0u - (uint32_t)x) : x; }
KGEN_INLINE int64_t kgen_abs_i64(int64_t x) { return x < 0 ? (int64_t)(0u - (uint64_t)x) : x; }

/* KGEN_KERNEL_HELPERS_END */

#endif /* KGEN_RUNTIME_H */
