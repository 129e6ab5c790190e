#include "common.h"
#include "conv2d.h"

#ifndef N
#define N 1
#endif
#ifndef C
#define C 16
#endif
#ifndef H
#define H 28
#endif
#ifndef W
#define W 28
#endif
#ifndef F
#define F 32
#endif
#ifndef KH
#define KH 3
#endif
#ifndef KW
#define KW 3
#endif
#ifndef S
#define S 1
#endif
#ifndef P
#define P 1
#endif
#ifndef D
#define D 1
#endif
#ifndef G
#define G 1
#endif
#define CG (C / G)
#define FG (F / G)
#define OH ((H + 2 * P - D * (KH - 1) - 1) / S + 1)
#define OW ((W + 2 * P - D * (KW - 1) - 1) / S + 1)

int main(void)
{
    float *x = new_input((size_t)N * C * H * W), *w = new_input((size_t)F * CG * KH * KW);
    float *y = new_output((size_t)N * F * OH * OW);
    double *ref = new_ref((size_t)N * F * OH * OW);
    void *ws = new_workspace(CONV2D_WORKSPACE_BYTES);
    int n, f, oy, ox, rc, ry, rx, st;
    if ((st = conv2d(x, w, y, ws)) != KGEN_OK)
        return fprintf(stderr, "status %d\n", st), 1;
    for (n = 0; n < N; n++)
        for (f = 0; f < F; f++)
            for (oy = 0; oy < OH; oy++)
                for (ox = 0; ox < OW; ox++) {
                    double s = 0;
                    for (rc = 0; rc < CG; rc++)
                        for (ry = 0; ry < KH; ry++)
                            for (rx = 0; rx < KW; rx++) {
                                int c = f / FG * CG + rc, iy = oy * S + ry * D - P, ix = ox * S + rx * D - P;
                                if (iy < 0 || iy >= H || ix < 0 || ix >= W)
                                    continue;
                                s += (double)x[((n * C + c) * H + iy) * W + ix] * w[((f * CG + rc) * KH + ry) * KW + rx];
                            }
                    ref[((n * F + f) * OH + oy) * OW + ox] = s;
                }
    return compare("Y", y, ref, (size_t)N * F * OH * OW, RTOL, ATOL);
}
