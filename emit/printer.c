/* printer.c - the scaffolding the loop-IR printers share (printer.h): the statement walk
 * over per-language hooks, scopes of names, identifiers, comment text, float digits.
 *
 * requires: lowered statements; breaks: nothing (reads only). The walk visits statements
 * in order and names depend only on that order, so output is deterministic.
 */
#include "printer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- the statement walk */

void em_line(EmPrinter *P) { sb_indent(P->out, P->depth); }

void em_block(EmPrinter *P, const Stmt *s)
{
    int mark = P->hooks->scope_mark(P);
    P->depth++;
    em_stmt(P, s);
    P->depth--;
    P->hooks->scope_pop(P, mark);
}

/* An if and its else branches; an else holding only an if continues the chain flat
 * ("} else if (...) {"). */
static void print_if(EmPrinter *P, const Stmt *s)
{
    em_line(P);
    for (;;) {
        P->hooks->if_head(P, s);
        em_block(P, s->u.cond.then);
        em_line(P);
        const Stmt *els = s->u.cond.els;
        if (!els) {
            sb_puts(P->out, "}\n");
            return;
        }
        if (els->kind == S_IF) {
            sb_puts(P->out, "} else ");
            s = els;
            continue;
        }
        sb_puts(P->out, "} else {\n");
        em_block(P, els);
        em_line(P);
        sb_puts(P->out, "}\n");
        return;
    }
}

void em_stmt(EmPrinter *P, const Stmt *s)
{
    if (!s)
        return;
    const EmStmtHooks *h = P->hooks;
    switch (s->kind) {
    case S_FOR: h->loop(P, s); break;
    case S_LET: h->let(P, s); break;
    case S_IF: print_if(P, s); break;
    case S_STORE: h->store(P, s); break;
    case S_ALLOC: h->alloc(P, s); break;
    case S_SEQ:
        for (int i = 0; i < s->u.seq.n; i++)
            em_stmt(P, s->u.seq.items[i]);
        break;
    case S_BARRIER:
        if (h->barrier)
            h->barrier(P, s);
        break;
    case S_PREFETCH:
        if (h->prefetch)
            h->prefetch(P, s);
        break;
    case S_COMMENT:
        em_line(P);
        sb_puts(P->out, "/* ");
        em_comment_text(P->out, s->u.comment);
        sb_puts(P->out, " */\n");
        break;
    }
}

/* ---------------------------------------------------------------- queries */

static int expr_any(const Expr *e, int (*fe)(const Expr *, void *), void *ctx)
{
    if (!e)
        return 0;
    if (fe(e, ctx))
        return 1;
    switch (e->kind) {
    case E_BIN: return expr_any(e->u.bin.a, fe, ctx) || expr_any(e->u.bin.b, fe, ctx);
    case E_UN: return expr_any(e->u.un.a, fe, ctx);
    case E_CALL:
        for (int i = 0; i < KG_MAX_ARGS; i++)
            if (expr_any(e->u.call.args[i], fe, ctx))
                return 1;
        return 0;
    case E_CAST:
    case E_BITCAST: return expr_any(e->u.cast.a, fe, ctx);
    case E_SELECT:
        return expr_any(e->u.sel.cond, fe, ctx) || expr_any(e->u.sel.t, fe, ctx) || expr_any(e->u.sel.f, fe, ctx);
    case E_LOAD: return expr_any(e->u.load.index, fe, ctx);
    default: return 0;
    }
}

int em_stmt_any(const Stmt *s, int (*fs)(const Stmt *, void *), int (*fe)(const Expr *, void *), void *ctx)
{
    if (!s)
        return 0;
    if (fs && fs(s, ctx))
        return 1;
#define EXPR(x) (fe && expr_any((x), fe, ctx))
#define STMT(x) em_stmt_any((x), fs, fe, ctx)
    switch (s->kind) {
    case S_FOR: return EXPR(s->u.loop.min) || EXPR(s->u.loop.extent) || STMT(s->u.loop.body);
    case S_LET: return EXPR(s->u.let.value) || STMT(s->u.let.body);
    case S_IF: return EXPR(s->u.cond.cond) || STMT(s->u.cond.then) || STMT(s->u.cond.els);
    case S_STORE: return EXPR(s->u.store.index) || EXPR(s->u.store.value);
    case S_PREFETCH: return EXPR(s->u.store.index);
    case S_ALLOC: return STMT(s->u.alloc.body);
    case S_SEQ:
        for (int i = 0; i < s->u.seq.n; i++)
            if (STMT(s->u.seq.items[i]))
                return 1;
        return 0;
    case S_COMMENT:
    case S_BARRIER: return 0;
    }
#undef EXPR
#undef STMT
    return 0;
}

/* ---------------------------------------------------------------- names */

int em_scope_push(EmScope *s, const void *key, char *name, int live)
{
    if (s->n == s->cap)
        s->items = ir_grow(s->items, &s->cap, sizeof *s->items, 32);
    s->items[s->n].key = key;
    s->items[s->n].name = name;
    s->items[s->n].live = live;
    return s->n++;
}

const EmBinding *em_scope_find(const EmScope *s, const void *key, int live_only)
{
    for (int i = s->n - 1; i >= 0; i--)
        if (s->items[i].key == key && (s->items[i].live || !live_only))
            return &s->items[i];
    return NULL;
}

int em_scope_has_name(const EmScope *s, const char *name)
{
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->items[i].name, name) == 0)
            return 1;
    return 0;
}

void em_scope_pop(EmScope *s, int mark, int free_names)
{
    while (s->n > mark) {
        s->n--;
        if (free_names)
            free(s->items[s->n].name);
    }
}

char *em_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *r = malloc(n);
    if (!r)
        ir_die("out of memory");
    return memcpy(r, s, n);
}

static int is_alpha(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static int is_digit(int c) { return c >= '0' && c <= '9'; }

char *em_ident_base(const char *s, const char *empty, int impl_names)
{
    size_t n = s ? strlen(s) : 0;
    if (n == 0)
        return em_strdup(empty);
    char *r = malloc(n + 3), *p = r;
    if (!r)
        ir_die("out of memory");
    if (is_digit(s[0])) {
        *p++ = 'v';
        *p++ = '_';
    } else if (impl_names && s[0] == '_' && (s[1] == '_' || (s[1] >= 'A' && s[1] <= 'Z'))) {
        *p++ = 'v';
    }
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        *p++ = is_alpha(c) || is_digit(c) || c == '_' ? c : '_';
    }
    *p = 0;
    return r;
}

char *em_unique_name(const char *base, int (*taken)(void *ctx, const char *s), void *ctx)
{
    size_t len = strlen(base) + 24;
    char *s = malloc(len);
    if (!s)
        ir_die("out of memory");
    strcpy(s, base);
    for (long i = 1; taken(ctx, s); i++)
        snprintf(s, len, "%s_%ld", base, i);
    return s;
}

/* ---------------------------------------------------------------- text */

void em_comment_text(StrBuf *o, const char *s)
{
    for (; s && *s; s++) {
        if ((s[0] == '*' && s[1] == '/') || (s[0] == '/' && s[1] == '*'))
            sb_printf(o, "%c ", s[0]);
        else if (*s == '\n')
            sb_puts(o, " ");
        else
            sb_printf(o, "%c", *s);
    }
}

void em_comment_notes(StrBuf *o, const PtrVec *notes, int bare_empty)
{
    for (int i = 0; i < notes->n; i++) {
        const char *note = notes->items[i];
        sb_puts(o, bare_empty && !(note && note[0]) ? "\n *" : "\n * ");
        em_comment_text(o, note);
    }
}

void em_shortest_g(char *buf, size_t n, double v, int f32, int whole_below)
{
    for (int p = 1; p <= 17; p++) {
        snprintf(buf, n, "%.*g", p, v);
        if (f32 ? strtof(buf, NULL) == (float)v : strtod(buf, NULL) == v)
            break;
    }
    /* %g writes a short whole number like 100 as "1e+02": spell it out */
    char *e = strchr(buf, 'e');
    if (e && atoi(e + 1) >= 0 && atoi(e + 1) < whole_below)
        snprintf(buf, n, "%.*g", atoi(e + 1) + 1, v);
}

int em_is_scalar(const Buffer *b)
{
    return b->scope == SCOPE_LOCAL && b->size == 1 && !ir_dtype_is_packed(b->dtype);
}

const char *em_math_override(const EmMathName *list, MathFn fn)
{
    for (; list && list->name; list++)
        if (list->fn == fn)
            return list->name;
    return NULL;
}
