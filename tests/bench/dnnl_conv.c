/* dnnl_conv.c - part of `make bench` (tests/bench/refs.sh): the oneDNN reference for a
 * 3x3 convolution, stride 1, pad 1, batch 1, fp32, with bias, forward inference, direct
 * algorithm. src, weights and dst use format_tag any, so oneDNN picks its own blocked
 * layouts; the weights are reordered once, untimed (kgen also blocks its weights at
 * compile time). Two figures, each the median of RUNS runs after a warm-up:
 *   conv_ms      the convolution primitive alone, on data already in oneDNN's layouts;
 *   reorder_ms   a reorder of src from NCHW, the convolution, a reorder of dst to NCHW
 *                (for information: what a caller holding NCHW tensors pays).
 *
 *     dnnl_conv C H W GROUPS [RUNS [THREADS]]     (GROUPS = C: depthwise)
 *
 * prints one line:
 *     impl=NAME conv_ms=... gflops=... reorder_ms=... reorder_gflops=...
 * GFLOP/s count 2 * multiply-adds (the bias adds are left out). The build needs
 * libdnnl-dev (oneDNN 2.x C API) and -fopenmp (Debian's oneDNN uses the OpenMP runtime;
 * THREADS, default 1, goes to omp_set_num_threads). */
#define _POSIX_C_SOURCE 199309L
#include <oneapi/dnnl/dnnl.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(call)                                                                                                    \
    do {                                                                                                               \
        dnnl_status_t s_ = (call);                                                                                     \
        if (s_ != dnnl_success) {                                                                                      \
            fprintf(stderr, "dnnl_conv: %s failed: status %d (line %d)\n", #call, (int)s_, __LINE__);                \
            exit(1);                                                                                                   \
        }                                                                                                              \
    } while (0)

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, cmp);
    return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

/* a memory object of desc, filled with a fixed pseudo-random pattern in [-1, 1) */
static dnnl_memory_t filled(const dnnl_memory_desc_t *md, dnnl_engine_t eng, unsigned seed)
{
    dnnl_memory_t m;
    void *p;
    size_t i, n = dnnl_memory_desc_get_size(md) / sizeof(float);
    CHECK(dnnl_memory_create(&m, md, eng, DNNL_MEMORY_ALLOCATE));
    CHECK(dnnl_memory_get_data_handle(m, &p));
    for (i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        ((float *)p)[i] = (float)(seed >> 8) / (float)(1u << 23) - 1.0f;
    }
    return m;
}

/* a reorder from one memory to another, run once now or kept as a primitive */
static dnnl_primitive_t reorder(dnnl_memory_t from, dnnl_memory_t to, dnnl_engine_t eng)
{
    const dnnl_memory_desc_t *a, *b;
    dnnl_primitive_desc_t pd;
    dnnl_primitive_t p;
    CHECK(dnnl_memory_get_memory_desc(from, &a));
    CHECK(dnnl_memory_get_memory_desc(to, &b));
    CHECK(dnnl_reorder_primitive_desc_create(&pd, a, eng, b, eng, NULL));
    CHECK(dnnl_primitive_create(&p, pd));
    CHECK(dnnl_primitive_desc_destroy(pd));
    return p;
}

static void run_reorder(dnnl_primitive_t p, dnnl_memory_t from, dnnl_memory_t to, dnnl_stream_t st)
{
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
    CHECK(dnnl_primitive_execute(p, st, 2, args));
}

int main(int argc, char **argv)
{
    long c, h, w, g;
    int runs = argc > 5 ? atoi(argv[5]) : 50, threads = argc > 6 ? atoi(argv[6]) : 1, i;
    dnnl_engine_t eng;
    dnnl_stream_t st;
    dnnl_memory_desc_t src_any, wei_any, dst_any, bias_md, src_nchw, wei_user, dst_nchw;
    dnnl_convolution_desc_t cd;
    dnnl_primitive_desc_t pd;
    dnnl_primitive_t conv, r_src, r_dst, r_wei;
    dnnl_memory_t m_src_nchw, m_src, m_wei_user, m_wei, m_bias, m_dst, m_dst_nchw;
    const char *impl = "?";
    double *t, conv_ms, full_ms, flops;

    if (argc < 5 || (c = atol(argv[1])) < 1 || (h = atol(argv[2])) < 1 || (w = atol(argv[3])) < 1 ||
        (g = atol(argv[4])) < 1 || c % g || runs < 1 || threads < 1) {
        fprintf(stderr, "usage: dnnl_conv C H W GROUPS [RUNS [THREADS]]\n");
        return 2;
    }
#ifdef _OPENMP
    omp_set_num_threads(threads);
#else
    if (threads != 1)
        fprintf(stderr, "dnnl_conv: built without -fopenmp, THREADS ignored\n");
#endif
    t = (double *)malloc((size_t)runs * sizeof *t);
    if (!t)
        return 1;
    {
        dnnl_dims_t sd = {1, c, h, w}, dd = {1, c, h, w}, bd = {c}, strides = {1, 1}, pad = {1, 1};
        dnnl_dims_t wd = {c, c, 3, 3}, gwd = {g, c / g, c / g, 3, 3};
        int wnd = g > 1 ? 5 : 4;
        CHECK(dnnl_memory_desc_init_by_tag(&src_any, 4, sd, dnnl_f32, dnnl_format_tag_any));
        CHECK(dnnl_memory_desc_init_by_tag(&dst_any, 4, dd, dnnl_f32, dnnl_format_tag_any));
        CHECK(dnnl_memory_desc_init_by_tag(&wei_any, wnd, g > 1 ? gwd : wd, dnnl_f32, dnnl_format_tag_any));
        CHECK(dnnl_memory_desc_init_by_tag(&bias_md, 1, bd, dnnl_f32, dnnl_x));
        CHECK(dnnl_memory_desc_init_by_tag(&src_nchw, 4, sd, dnnl_f32, dnnl_nchw));
        CHECK(dnnl_memory_desc_init_by_tag(&dst_nchw, 4, dd, dnnl_f32, dnnl_nchw));
        CHECK(dnnl_memory_desc_init_by_tag(&wei_user, wnd, g > 1 ? gwd : wd, dnnl_f32, g > 1 ? dnnl_goihw : dnnl_oihw));
        CHECK(dnnl_convolution_forward_desc_init(&cd, dnnl_forward_inference, dnnl_convolution_direct, &src_any,
                                                 &wei_any, &bias_md, &dst_any, strides, pad, pad));
    }
    CHECK(dnnl_engine_create(&eng, dnnl_cpu, 0));
    CHECK(dnnl_stream_create(&st, eng, dnnl_stream_default_flags));
    CHECK(dnnl_primitive_desc_create(&pd, &cd, NULL, eng, NULL));
    CHECK(dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl));
    CHECK(dnnl_primitive_create(&conv, pd));

    m_src_nchw = filled(&src_nchw, eng, 1);
    m_wei_user = filled(&wei_user, eng, 2);
    m_bias = filled(&bias_md, eng, 3);
    CHECK(dnnl_memory_create(&m_src, dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0), eng, DNNL_MEMORY_ALLOCATE));
    CHECK(dnnl_memory_create(&m_wei, dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0), eng,
                             DNNL_MEMORY_ALLOCATE));
    CHECK(dnnl_memory_create(&m_dst, dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0), eng, DNNL_MEMORY_ALLOCATE));
    CHECK(dnnl_memory_create(&m_dst_nchw, &dst_nchw, eng, DNNL_MEMORY_ALLOCATE));
    r_src = reorder(m_src_nchw, m_src, eng);
    r_dst = reorder(m_dst, m_dst_nchw, eng);
    r_wei = reorder(m_wei_user, m_wei, eng);
    run_reorder(r_wei, m_wei_user, m_wei, st);   /* once: weights are constants */
    run_reorder(r_src, m_src_nchw, m_src, st);
    CHECK(dnnl_stream_wait(st));

    {
        dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, m_src}, {DNNL_ARG_WEIGHTS, m_wei}, {DNNL_ARG_BIAS, m_bias},
                                   {DNNL_ARG_DST, m_dst}};
        int pass;
        /* pass 0: the convolution alone; pass 1: with the reorders from and to NCHW */
        for (pass = 0; pass < 2; pass++) {
            for (i = -1; i < runs; i++) {   /* i = -1: warm-up */
                double t0 = now_ms();
                if (pass)
                    run_reorder(r_src, m_src_nchw, m_src, st);
                CHECK(dnnl_primitive_execute(conv, st, 4, args));
                if (pass)
                    run_reorder(r_dst, m_dst, m_dst_nchw, st);
                CHECK(dnnl_stream_wait(st));
                if (i >= 0)
                    t[i] = now_ms() - t0;
            }
            if (pass)
                full_ms = median(t, runs);
            else
                conv_ms = median(t, runs);
        }
    }
    flops = 2.0 * (double)c * (double)h * (double)w * (double)(c / g) * 9.0;
    printf("impl=%s conv_ms=%.6f gflops=%.2f reorder_ms=%.6f reorder_gflops=%.2f\n", impl, conv_ms,
           flops / conv_ms / 1e6, full_ms, flops / full_ms / 1e6);

    dnnl_primitive_destroy(conv);
    dnnl_primitive_destroy(r_src);
    dnnl_primitive_destroy(r_dst);
    dnnl_primitive_destroy(r_wei);
    dnnl_primitive_desc_destroy(pd);
    dnnl_memory_destroy(m_src_nchw);
    dnnl_memory_destroy(m_src);
    dnnl_memory_destroy(m_wei_user);
    dnnl_memory_destroy(m_wei);
    dnnl_memory_destroy(m_bias);
    dnnl_memory_destroy(m_dst);
    dnnl_memory_destroy(m_dst_nchw);
    dnnl_stream_destroy(st);
    dnnl_engine_destroy(eng);
    free(t);
    return 0;
}
