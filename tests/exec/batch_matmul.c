#include "common.h"
#include "batch_matmul.h"

#ifndef BATCH
#define BATCH 8
#endif
#ifndef M
#define M 64
#endif
#ifndef N
#define N 64
#endif
#ifndef K
#define K 64
#endif

int main(void)
{
    float *a = new_input((size_t)BATCH * M * K), *b = new_input((size_t)BATCH * K * N);
    float *c = new_output((size_t)BATCH * M * N);
    double *ref = new_ref((size_t)BATCH * M * N);
    void *ws = new_workspace(BATCH_MATMUL_WORKSPACE_BYTES);
    int bb, i, j, k, rc;
    if ((rc = batch_matmul(a, b, c, ws)) != KGEN_OK)
        return fprintf(stderr, "status %d\n", rc), 1;
    for (bb = 0; bb < BATCH; bb++)
        for (i = 0; i < M; i++)
            for (j = 0; j < N; j++) {
                double s = 0;
                for (k = 0; k < K; k++)
                    s += (double)a[(bb * M + i) * K + k] * b[(bb * K + k) * N + j];
                ref[(bb * M + i) * N + j] = s;
            }
    /* float32 accumulation over K terms: the absolute error grows with K */
    return compare("C", c, ref, (size_t)BATCH * M * N, RTOL, ATOL + 2e-6 * K);
}
