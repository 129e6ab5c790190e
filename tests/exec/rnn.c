#include "common.h"
#include "rnn.h"

#ifndef T
#define T 16
#endif
#ifndef I
#define I 32
#endif
#ifndef H
#define H 64
#endif

int main(void)
{
    float *x = new_input((size_t)T * I), *wx = new_input((size_t)H * I), *uh = new_input((size_t)H * H);
    float *bh = new_input(H), *h0 = new_input(H), *out = new_output((size_t)T * H);
    double *ref = new_ref((size_t)T * H), prev[H], cur[H];
    void *ws = new_workspace(RNN_WORKSPACE_BYTES);
    int t, i, j, st;
    for (i = 0; i < H * I; i++)
        wx[i] *= 0.2f;
    for (i = 0; i < H * H; i++)
        uh[i] *= 0.2f;
    if ((st = rnn(x, wx, uh, bh, h0, out, ws)) != KGEN_OK)
        return fprintf(stderr, "status %d\n", st), 1;
    for (i = 0; i < H; i++)
        prev[i] = h0[i];
    for (t = 0; t < T; t++) {
        for (i = 0; i < H; i++) {
            double s = bh[i];
            for (j = 0; j < I; j++)
                s += (double)wx[i * I + j] * x[t * I + j];
            for (j = 0; j < H; j++)
                s += (double)uh[i * H + j] * prev[j];
            cur[i] = tanh(s);
            ref[t * H + i] = cur[i];
        }
        memcpy(prev, cur, sizeof prev);
    }
    return compare("H", out, ref, (size_t)T * H, RTOL, ATOL);
}
