/* util.c - arenas, errors, growable vectors and strings shared by every pass. */
#include "ir.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- arena */

typedef struct Block {
    struct Block *next;
    size_t size, used;
    max_align_t data[];
} Block;

struct Arena {
    Block *head;
};

static Arena *current;

Arena *ir_arena_new(void)
{
    Arena *a = calloc(1, sizeof *a);
    if (!a)
        ir_die("out of memory");
    return a;
}

void ir_arena_free(Arena *a)
{
    if (!a)
        return;
    for (Block *b = a->head, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    if (current == a)
        current = NULL;
    free(a);
}

void ir_arena_set(Arena *a) { current = a; }

void *ir_alloc(size_t size)
{
    if (!current)
        ir_die("ir_alloc without an arena");
    size = (size + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
    Block *b = current->head;
    if (!b || b->size - b->used < size) {
        size_t cap = size > (size_t)1 << 16 ? size : (size_t)1 << 16;
        b = malloc(sizeof *b + cap);
        if (!b)
            ir_die("out of memory (%zu bytes)", size);
        b->size = cap;
        b->used = 0;
        b->next = current->head;
        current->head = b;
    }
    void *p = (char *)b->data + b->used;
    b->used += size;
    memset(p, 0, size);
    return p;
}

char *ir_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = ir_alloc(n);
    memcpy(p, s, n);
    return p;
}

char *ir_fmt(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *p = ir_alloc((size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return p;
}

/* ---------------------------------------------------------------- errors */

static char errbuf[16384];

int ir_fail(const char *fmt, ...)
{
    char tmp[sizeof errbuf];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);   /* fmt may use ir_errmsg() as an argument */
    va_end(ap);
    memcpy(errbuf, tmp, sizeof errbuf);
    return -1;
}

const char *ir_errmsg(void) { return errbuf[0] ? errbuf : "unknown error"; }

void ir_clear_error(void) { errbuf[0] = 0; }

void ir_die_at(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "kgen: internal error at %s:%d: ", file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    abort();
}

/* ---------------------------------------------------------------- vectors, strings */

void ir_vec_push(PtrVec *v, void *item, int limit, const char *what)
{
    if (v->n >= limit)
        ir_die("too many %s (limit %d)", what, limit);
    if (v->n == v->cap)
        v->items = ir_grow_arena(v->items, v->n, &v->cap, sizeof *v->items, 8);
    v->items[v->n++] = item;
}

void *ir_grow(void *items, int *cap, size_t elem, int first)
{
    int c = *cap ? *cap * 2 : first;
    void *p = realloc(items, elem * (size_t)c);
    if (!p)
        ir_die("out of memory");
    *cap = c;
    return p;
}

void *ir_grow_arena(const void *items, int n, int *cap, size_t elem, int first)
{
    int c = *cap ? *cap * 2 : first;
    void *p = ir_alloc(elem * (size_t)c);
    if (n)
        memcpy(p, items, elem * (size_t)n);
    *cap = c;
    return p;
}

static void sb_reserve(StrBuf *b, size_t extra)
{
    if (b->len + extra + 1 <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1)
        cap *= 2;
    char *d = realloc(b->data, cap);
    if (!d)
        ir_die("out of memory");
    b->data = d;
    b->cap = cap;
}

void sb_printf(StrBuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        ir_die("bad format");
    sb_reserve(b, (size_t)n);
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void sb_puts(StrBuf *b, const char *s)
{
    size_t n = strlen(s);
    sb_reserve(b, n);
    memcpy(b->data + b->len, s, n + 1);
    b->len += n;
}

void sb_indent(StrBuf *b, int levels)
{
    for (int i = 0; i < levels; i++)
        sb_puts(b, "    ");
}

void sb_free(StrBuf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}
