/* main_m4.c - runs a kgen-generated model once on a bare-metal Cortex-M (picolibc with
 * semihosting, e.g. qemu-system-arm -M mps2-an386) and prints its outputs.
 *
 * The model is named by macros, so one file serves every single-input model:
 *
 *     -DKGEN_BM_HEADER='"small_cnn.h"'  the generated header
 *     -DKGEN_BM_NAME=small_cnn          the model's function prefix
 *     -DKGEN_BM_UNAME=SMALL_CNN         the prefix of its macros (NAME_ARENA_BYTES, ...)
 *     -DKGEN_BM_INPUT='"input_0.h"'     from npy2c: kgen_bm_input_0[] (float32)
 *     -DKGEN_BM_OUT_FLOATS=N            room for all outputs (default 4096 floats)
 *
 * The input sits in flash (const), the arena is a static 64-byte aligned array of
 * NAME_ARENA_BYTES, the outputs a static array. Before the call, the stack below main's
 * frame is painted; afterwards the lowest overwritten word gives the stack the model
 * used. Prints every output value as "%.6e" one per line, then "key=value" lines:
 * stack_bytes (measured), arena_bytes, and systick_ticks (instructions under
 * qemu -icount shift=6: about ticks * 40/64). Returns 0 on success, 1 when the model
 * returns an error status or the outputs do not fit.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include KGEN_BM_HEADER
#include KGEN_BM_INPUT

#define KGEN_BM_CAT2_(a, b) a##b
#define KGEN_BM_CAT_(a, b) KGEN_BM_CAT2_(a, b)
#define KGEN_BM_FN KGEN_BM_CAT_(KGEN_BM_NAME, _tensors)
#define KGEN_BM_IN_INFO KGEN_BM_CAT_(KGEN_BM_NAME, _input_info)
#define KGEN_BM_OUT_INFO KGEN_BM_CAT_(KGEN_BM_NAME, _output_info)
#define KGEN_BM_ARENA_BYTES KGEN_BM_CAT_(KGEN_BM_UNAME, _ARENA_BYTES)
#define KGEN_BM_NUM_INPUTS KGEN_BM_CAT_(KGEN_BM_UNAME, _NUM_INPUTS)
#define KGEN_BM_NUM_OUTPUTS KGEN_BM_CAT_(KGEN_BM_UNAME, _NUM_OUTPUTS)

#ifndef KGEN_BM_OUT_FLOATS
#define KGEN_BM_OUT_FLOATS 4096
#endif
/* How much of the stack below main's frame to paint: must fit in the RAM the stack has. */
#ifndef KGEN_BM_PAINT_BYTES
#define KGEN_BM_PAINT_BYTES 65536
#endif
#define KGEN_BM_PAINT 0xDEADBEEFu

#if KGEN_BM_NUM_INPUTS != 1
#error "main_m4.c runs models with exactly one input"
#endif

/* SysTick (ARMv7-M): a 24-bit down-counter on the CPU clock. Its interrupt counts the
 * wraps (picolibc's vector table calls arm_systick_isr, weak there), so long runs are
 * timed right too; an interrupt's frame may add up to about 100 bytes to stack_bytes. */
#define SYST_CSR (*(volatile uint32_t *)0xE000E010)
#define SYST_RVR (*(volatile uint32_t *)0xE000E014)
#define SYST_CVR (*(volatile uint32_t *)0xE000E018)

static volatile uint32_t systick_wraps;

void arm_systick_isr(void);
void arm_systick_isr(void) { systick_wraps++; }

static KGEN_ALIGN(64) unsigned char arena[KGEN_BM_ARENA_BYTES > 0 ? KGEN_BM_ARENA_BYTES : 1];
static KGEN_ALIGN(64) float outputs[KGEN_BM_OUT_FLOATS];

static size_t count_of(const kgen_value_info *v)
{
    size_t n = 1;
    int32_t d;
    for (d = 0; d < v->ndim; d++)
        n *= (size_t)v->shape[d];
    return n;
}

/* Fill the KGEN_BM_PAINT_BYTES below this function's frame (less a margin for its own
 * locals) with the pattern; returns the lowest painted address. */
static __attribute__((noinline)) volatile uint32_t *paint_stack(void)
{
    volatile uint32_t here = 0;
    uintptr_t top = ((uintptr_t)&here - 64u) & ~(uintptr_t)3;
    volatile uint32_t *p = (volatile uint32_t *)(top - KGEN_BM_PAINT_BYTES);
    volatile uint32_t *bottom = p;
    while ((uintptr_t)p < top)
        *p++ = KGEN_BM_PAINT;
    return bottom;
}

int main(void)
{
    kgen_tensor t[1 + KGEN_BM_NUM_OUTPUTS];
    kgen_tensor *args[1 + KGEN_BM_NUM_OUTPUTS];
    int64_t shapes[1 + KGEN_BM_NUM_OUTPUTS][KGEN_MAX_DIMS];
    volatile uint32_t *bottom, *p;
    volatile uint32_t frame = 0;
    size_t used = 0, n, i;
    uint32_t t0, t1;
    uint64_t ticks;
    int k, d, status;

    memset(t, 0, sizeof t);
    for (k = 0; k < 1 + KGEN_BM_NUM_OUTPUTS; k++) {
        const kgen_value_info *v = k ? &KGEN_BM_OUT_INFO[k - 1] : &KGEN_BM_IN_INFO[0];
        for (d = 0; d < v->ndim; d++)
            shapes[k][d] = v->shape[d];
        t[k].device.device_type = KGEN_DEVICE_CPU;
        t[k].ndim = v->ndim;
        t[k].dtype = v->dtype;
        t[k].shape = shapes[k];
        n = count_of(v);
        if (k == 0) {
            if (n != kgen_bm_input_0_COUNT || v->dtype.code != KGEN_DTYPE_FLOAT || v->dtype.bits != 32) {
                printf("error: the input has %lu float32 elements, the model wants %lu %s\n",
                       (unsigned long)kgen_bm_input_0_COUNT, (unsigned long)n, v->name);
                return 1;
            }
            t[k].data = (void *)(uintptr_t)kgen_bm_input_0; /* read only */
        } else {
            if (v->dtype.code != KGEN_DTYPE_FLOAT || v->dtype.bits != 32 || used + n > KGEN_BM_OUT_FLOATS) {
                printf("error: output %d (%s) is not float32 or does not fit\n", k - 1, v->name);
                return 1;
            }
            t[k].data = outputs + used;
            used += n;
        }
        args[k] = &t[k];
    }

    bottom = paint_stack();
    SYST_RVR = 0xFFFFFF;
    SYST_CVR = 0;
    SYST_CSR = 7; /* enable, interrupt on wrap, processor clock */
    t0 = SYST_CVR;
    status = KGEN_BM_FN(args, 1 + KGEN_BM_NUM_OUTPUTS, arena);
    t1 = SYST_CVR;
    SYST_CSR = 0;
    ticks = (uint64_t)systick_wraps * 0x1000000u + ((t0 - t1) & 0xFFFFFFu);
    for (p = bottom; *p == KGEN_BM_PAINT; p++)
        ;
    if (status != KGEN_OK) {
        printf("error: the model returned %d (%s)\n", status, kgen_status_str(status));
        return 1;
    }
    for (i = 0; i < used; i++)
        printf("%.6e\n", (double)outputs[i]);
    printf("stack_bytes=%lu\n", (unsigned long)((uintptr_t)&frame - (uintptr_t)p));
    printf("stack_painted_bytes=%lu\n", (unsigned long)KGEN_BM_PAINT_BYTES);
    printf("arena_bytes=%lu\n", (unsigned long)KGEN_BM_ARENA_BYTES);
    printf("systick_ticks=%llu\n", (unsigned long long)ticks);
    return 0;
}
