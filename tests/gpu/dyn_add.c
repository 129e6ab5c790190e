/* dyn_add.c - tests/dyn_gpu.sh's driver for tests/data/dyn/add_t.onnx built for a GPU
 * target with --dim B=1..16 --dim C=1..16 --name m: y = Transpose(Relu(a + b)), a: f32[B, 8],
 * b: f32[C, 8], y: f32[8, B] (an output with a dim decided at run time, compact at the
 * actual extent), and a derived check B == C. Through the host entry m(a, b, y, arena, B, C):
 *   - at B = C = 1, 5, 16 the output against the values computed here (exact: one add and
 *     a max), and the bytes after the output left as they were (the copy back moves B * 8
 *     floats, not the bound's);
 *   - m_output_shape gives [8, B];
 *   - B != C, B = 0 and B = 17 return KGEN_ERR_SHAPE.
 * Prints one line per failure and "dyn_add: N passed, N failed"; exit status 1 on a failure.
 */
#include <stdio.h>
#include <string.h>

#include "m.h"

#define BOUND 16
#define SENTINEL -7.0f

static int pass, fail;

static void check(int ok, const char *what, long long b)
{
    if (ok)
        pass++;
    else {
        fail++;
        printf("FAIL dyn_add: %s (B = %lld)\n", what, b);
    }
}

int main(void)
{
    static float a[BOUND * 8], b[BOUND * 8], y[8 * BOUND + 8];
    const long long extents[] = {1, 5, 16, 3};
    for (int t = 0; t < 4; t++) {
        long long B = extents[t];
        int64_t dims[2] = {B, B}, shape[2] = {0, 0};
        int bad = 0;
        for (int i = 0; i < B * 8; i++) {
            a[i] = (float)((i * 37 + t * 11) % 23) - 11.0f;
            b[i] = (float)((i * 13 + t * 5) % 19) * 0.5f - 4.0f;
        }
        for (int i = 0; i < 8 * BOUND + 8; i++)
            y[i] = SENTINEL;
        check(m(a, b, y, NULL, B, B) == KGEN_OK, "m() did not return KGEN_OK", B);
        for (int r = 0; r < 8; r++)
            for (int c = 0; c < B; c++) {
                float s = a[c * 8 + r] + b[c * 8 + r], want = s > 0 ? s : 0;
                bad += y[r * B + c] != want;
            }
        check(!bad, "wrong output values", B);
        bad = 0;
        for (long long i = 8 * B; i < 8 * BOUND + 8; i++)
            bad += y[i] != SENTINEL;
        check(!bad, "the output copy wrote past the run's extent", B);
        check(m_output_shape(0, dims, shape) == KGEN_OK && shape[0] == 8 && shape[1] == B, "m_output_shape", B);
    }
    check(m(a, b, y, NULL, 5, 6) == KGEN_ERR_SHAPE, "B != C accepted", 5);
    check(m(a, b, y, NULL, 0, 0) == KGEN_ERR_SHAPE, "B below its range accepted", 0);
    check(m(a, b, y, NULL, 17, 17) == KGEN_ERR_SHAPE, "B above its range accepted", 17);
    m_release();
    printf("dyn_add: %d passed, %d failed\n", pass, fail);
    return fail != 0;
}
