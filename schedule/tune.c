/* tune.c - the auto-tuner's search and its log: a space of integer knobs, an
 * evolutionary search over it, and the append-only text log of measured trials.
 * requires: nothing (the driver, gen/tune_run.c, builds, runs and times candidates);
 * breaks: nothing.
 *
 * The search: the first trials are random points of the space; after that each new
 * point is a mutation (one or two knobs moved to a neighbouring or a random value,
 * sometimes after a crossover with another parent) of one of the three fastest trials
 * so far, never a point already tried. Every choice comes from one seeded generator, so
 * the same seed and the same log give the same sequence.
 *
 * The log: one line per trial, "WORKLOAD<TAB>CONFIG<TAB>RESULT", where CONFIG is
 * "NAME=VALUE,..." in the space's knob order and RESULT is "ms=MEDIAN rel=RATIO" (RATIO:
 * the median over the untuned build's, both timed in turn in one process; trials rank
 * by it) or "error=WHAT: detail". Lines starting with '#' are comments. A run appends; a later run
 * (or `kgen --tuning-log`) reads every line of its workload.
 */
#include "schedule.h"

#include <stdlib.h>
#include <string.h>

#define RANDOM_FIRST 3   /* trials drawn at random before the search mutates the best */
#define PARENTS 3        /* the mutation picks its parent among this many fastest */
#define MARGIN 0.98      /* a trial takes the lead only when this much faster (noise) */

static uint64_t rnd(SchTuner *t)
{
    /* splitmix64 */
    uint64_t z = (t->rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int below(SchTuner *t, int n)
{
    return n > 0 ? (int)(rnd(t) % (uint64_t)n) : 0;
}

void sch_tune_init(SchTuner *t, const SchSpace *sp, uint64_t seed)
{
    memset(t, 0, sizeof *t);
    t->space = sp;
    t->rng = seed * 0x2545f4914f6cdd1dull + 1;
}

void sch_tune_free(SchTuner *t)
{
    free(t->trials);
    t->trials = NULL;
    t->n = t->cap = 0;
}

static int same(const SchSpace *sp, const SchConfig *a, const SchConfig *b)
{
    for (int k = 0; k < sp->n; k++)
        if (a->v[k] != b->v[k])
            return 0;
    return 1;
}

int sch_tune_seen(const SchTuner *t, const SchConfig *c)
{
    for (int i = 0; i < t->n; i++)
        if (same(t->space, &t->trials[i].cfg, c))
            return 1;
    return 0;
}

void sch_tune_record(SchTuner *t, const SchConfig *c, double ms)
{
    if (t->n == t->cap)
        t->trials = ir_grow(t->trials, &t->cap, sizeof *t->trials, 64);
    t->trials[t->n].cfg = *c;
    t->trials[t->n].ms = ms;
    t->n++;
}

const SchTrial *sch_tune_best(const SchTuner *t)
{
    const SchTrial *best = NULL;
    for (int i = 0; i < t->n; i++)
        if (t->trials[i].ms >= 0 && (!best || t->trials[i].ms < best->ms * MARGIN))
            best = &t->trials[i];
    return best;
}

static int value_index(const SchKnob *k, int64_t v)
{
    for (int i = 0; i < k->n; i++)
        if (k->values[i] == v)
            return i;
    return -1;
}

static double space_size(const SchSpace *sp)
{
    double n = 1;
    for (int k = 0; k < sp->n; k++)
        n *= sp->knobs[k].n;
    return n;
}

/* The first point not yet tried, in order (the space is small or nearly exhausted). */
static int first_unseen(SchTuner *t, SchConfig *out)
{
    const SchSpace *sp = t->space;
    int idx[SCH_TUNE_MAX_KNOBS] = {0};
    for (;;) {
        for (int k = 0; k < sp->n; k++)
            out->v[k] = sp->knobs[k].values[idx[k]];
        if (!sch_tune_seen(t, out))
            return 0;
        int k = sp->n - 1;
        while (k >= 0 && ++idx[k] == sp->knobs[k].n)
            idx[k--] = 0;
        if (k < 0)
            return -1;
    }
}

static void random_point(SchTuner *t, SchConfig *out)
{
    for (int k = 0; k < t->space->n; k++)
        out->v[k] = t->space->knobs[k].values[below(t, t->space->knobs[k].n)];
}

static void mutate(SchTuner *t, SchConfig *c)
{
    const SchSpace *sp = t->space;
    int movable[SCH_TUNE_MAX_KNOBS], nm = 0;
    for (int k = 0; k < sp->n; k++)
        if (sp->knobs[k].n > 1)
            movable[nm++] = k;
    if (!nm)
        return;
    int times = below(t, 3) == 0 ? 2 : 1;
    for (int m = 0; m < times; m++) {
        const SchKnob *kn = &sp->knobs[movable[below(t, nm)]];
        int ki = (int)(kn - sp->knobs);
        int i = value_index(kn, c->v[ki]);
        if (i >= 0 && below(t, 2)) {
            /* a neighbour: the values are usually listed in order */
            i += below(t, 2) ? 1 : -1;
            i = i < 0 ? 1 : i >= kn->n ? kn->n - 2 : i;
        } else {
            int j = below(t, kn->n - 1);
            i = i >= 0 && j >= i ? j + 1 : j;
        }
        c->v[ki] = kn->values[i];
    }
}

/* Indices of the fastest successful trials, fastest first. */
static int ranked(const SchTuner *t, int *out, int max)
{
    int n = 0;
    for (int i = 0; i < t->n; i++) {
        double ms = t->trials[i].ms;
        if (ms < 0)
            continue;
        int j = n;
        while (j > 0 && t->trials[out[j - 1]].ms > ms)
            j--;
        if (j >= max)
            continue;
        for (int k = n < max ? n : max - 1; k > j; k--)
            out[k] = out[k - 1];
        out[j] = i;
        n += n < max;
    }
    return n;
}

int sch_tune_next(SchTuner *t, SchConfig *out)
{
    const SchSpace *sp = t->space;
    if ((double)t->n >= space_size(sp))
        return first_unseen(t, out);
    int best[PARENTS];
    int nb = ranked(t, best, PARENTS);
    for (int attempt = 0; attempt < 200; attempt++) {
        if (nb == 0 || t->n < RANDOM_FIRST) {
            random_point(t, out);
        } else {
            *out = t->trials[best[below(t, nb)]].cfg;
            if (nb > 1 && below(t, 4) == 0) {
                /* crossover: take each knob from one of two parents */
                const SchConfig *o = &t->trials[best[below(t, nb)]].cfg;
                for (int k = 0; k < sp->n; k++)
                    if (below(t, 2))
                        out->v[k] = o->v[k];
            }
            mutate(t, out);
        }
        if (!sch_tune_seen(t, out))
            return 0;
    }
    return first_unseen(t, out);
}

void sch_tune_format(const SchSpace *sp, const SchConfig *c, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = 0;
    for (int k = 0; k < sp->n && used < n; k++) {
        int w = snprintf(buf + used, n - used, "%s%s=%lld", k ? "," : "", sp->knobs[k].name, (long long)c->v[k]);
        if (w < 0)
            return;
        used += (size_t)w;
    }
}

int sch_tune_config_value(const char *config, const char *name, int64_t *out)
{
    size_t len = strlen(name);
    for (const char *p = config; *p;) {
        if (!strncmp(p, name, len) && p[len] == '=') {
            char *end;
            long long v = strtoll(p + len + 1, &end, 10);
            if (end == p + len + 1 || (*end && *end != ','))
                return -1;
            *out = v;
            return 0;
        }
        p = strchr(p, ',');
        if (!p)
            break;
        p++;
    }
    return -1;
}

int sch_tune_parse(const SchSpace *sp, const char *config, SchConfig *out)
{
    memset(out, 0, sizeof *out);
    for (int k = 0; k < sp->n; k++)
        if (sch_tune_config_value(config, sp->knobs[k].name, &out->v[k]) ||
            value_index(&sp->knobs[k], out->v[k]) < 0)
            return -1;
    return 0;
}

/* ---------------------------------------------------------------- the log */

/* Split a log line in place into its three fields; 0, or -1 for a comment or a bad line. */
static int split_line(char *line, char **wl, char **cfg, char **res)
{
    line[strcspn(line, "\r\n")] = 0;
    if (line[0] == '#' || !line[0])
        return -1;
    char *a = strchr(line, '\t');
    char *b = a ? strchr(a + 1, '\t') : NULL;
    if (!b)
        return -1;
    *a = *b = 0;
    *wl = line;
    *cfg = a + 1;
    *res = b + 1;
    return 0;
}

/* The score of a result: "ms=1.25 rel=0.91" -> 0.91, the time relative to the untuned
 * build's, both timed in turn in one process (what a busy machine disturbs least); an
 * error, a bad number or a result without rel (nothing to compare it with) -> -1. */
static double result_score(const char *res)
{
    const char *rel = strstr(res, " rel=");
    if (strncmp(res, "ms=", 3) || !rel)
        return -1;
    char *end;
    double v = strtod(rel + 5, &end);
    return end == rel + 5 || v < 0 ? -1 : v;
}

/* Scan path's records of workload; visit_res, when given, also sees each result field. */
static int log_scan(const char *path, const char *workload, SchTuneVisit visit,
                    void (*visit_res)(void *ctx, const char *res), void *ctx)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;   /* no log yet */
    char line[4096];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        char *wl, *cfg, *res;
        if (split_line(line, &wl, &cfg, &res) || strcmp(wl, workload))
            continue;
        visit(ctx, cfg, result_score(res));
        if (visit_res)
            visit_res(ctx, res);
        n++;
    }
    fclose(f);
    return n;
}

int sch_tune_log_scan(const char *path, const char *workload, SchTuneVisit visit, void *ctx)
{
    return log_scan(path, workload, visit, NULL, ctx);
}

int sch_tune_log_append(const char *path, const char *workload, const char *config, double ms, double rel,
                        const char *built, const char *error)
{
    FILE *f = fopen(path, "a");
    if (!f)
        return ir_fail("cannot append to the tuning log '%s'", path);
    if (error) {
        /* one line: no tabs or newlines from a compiler's message */
        char clean[256];
        size_t i = 0;
        for (; error[i] && i + 1 < sizeof clean; i++)
            clean[i] = error[i] == '\t' || error[i] == '\n' || error[i] == '\r' ? ' ' : error[i];
        clean[i] = 0;
        fprintf(f, "%s\t%s\terror=%s\n", workload, config, clean);
    } else {
        fprintf(f, "%s\t%s\tms=%.6f", workload, config, ms);
        if (rel >= 0)
            fprintf(f, " rel=%.4f", rel);
        if (built && *built && !strpbrk(built, "\t\r\n"))
            fprintf(f, " built=%s", built);
        fputc('\n', f);
    }
    int bad = ferror(f);
    bad |= fclose(f) != 0;
    return bad ? ir_fail("cannot write the tuning log '%s'", path) : 0;
}

typedef struct {
    char *config, *built;
    size_t n;
    double ms;
    int taken;   /* the record just visited became the best */
} BestCtx;

static void visit_best(void *ctx, const char *config, double ms)
{
    BestCtx *b = ctx;
    b->taken = ms >= 0 && (b->ms < 0 || ms < b->ms * MARGIN) && strlen(config) < b->n;
    if (b->taken) {
        b->ms = ms;
        strcpy(b->config, config);
    }
}

static void visit_best_res(void *ctx, const char *res)
{
    BestCtx *b = ctx;
    if (!b->taken)
        return;
    const char *p = strstr(res, " built=");
    snprintf(b->built, b->n, "%s", p ? p + 7 : "");
}

int sch_tune_log_best(const char *path, const char *workload, char *config, size_t n, double *ms, char *built)
{
    BestCtx b = {config, built, n, -1, 0};
    log_scan(path, workload, visit_best, visit_best_res, &b);
    if (b.ms < 0)
        return 0;
    *ms = b.ms;
    return 1;
}
