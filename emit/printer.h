/* printer.h - private to emit/: the scaffolding every printer of the loop IR shares (the
 * C family in cprint.c, JavaScript in jsprint.c, and the next one: WGSL).
 *
 * A printer embeds an EmPrinter as its first member and hands em_stmt a table of hooks,
 * one per statement kind its language spells its own way; em_stmt walks the statement
 * tree itself (sequences, if / else if chains, comments, indentation, block scopes). Names
 * live in EmScope stacks of bindings (a Var or Buffer to its printed name); em_ident_base
 * and em_unique_name make identifiers; the comment helpers print IR text inside block
 * comments safely; em_math_override looks a math function up in a dialect's spelling list.
 *
 * A new printer (WGSL, say): a struct with an EmPrinter first and an EmScope of names; an
 * EmStmtHooks table (loop, let, store, alloc, if_head, the scope pair; barrier, prefetch
 * where the language has them); its own expression printer (precedence, casts, math names
 * from an EmMathName list); for a GPU language, the launches from lower_launch_plan
 * (lower/launch.h) rather than an analysis of its own.
 */
#ifndef KGEN_PRINTER_H
#define KGEN_PRINTER_H

#include "emit.h"

typedef struct EmPrinter EmPrinter;

/* How a printer spells each statement kind (s has that kind). A NULL barrier or prefetch
 * hook prints nothing. */
typedef struct {
    void (*loop)(EmPrinter *P, const Stmt *s);
    void (*let)(EmPrinter *P, const Stmt *s);
    void (*store)(EmPrinter *P, const Stmt *s);
    void (*alloc)(EmPrinter *P, const Stmt *s);
    void (*barrier)(EmPrinter *P, const Stmt *s);
    void (*prefetch)(EmPrinter *P, const Stmt *s);
    /* an if's head, after the indentation or "} else ": "if (cond) {" and the newline */
    void (*if_head)(EmPrinter *P, const Stmt *s);
    /* a nested block's names: the mark to return to, and the return (drops the names
     * bound since) */
    int (*scope_mark)(EmPrinter *P);
    void (*scope_pop)(EmPrinter *P, int mark);
} EmStmtHooks;

struct EmPrinter {
    StrBuf *out;                   /* where the text goes */
    int depth;                     /* indentation level (four spaces each) */
    const EmStmtHooks *hooks;
};

/* Indent a new line to the current depth. */
void em_line(EmPrinter *P);
/* Print s (NULL: nothing) through the hooks. */
void em_stmt(EmPrinter *P, const Stmt *s);
/* Print s one level deeper, in a block scope of its own. */
void em_block(EmPrinter *P, const Stmt *s);

/* Does any node of s answer 1? fs is asked of every statement (before the ones inside
 * it), fe of every expression in them (before its operands); either may be NULL, and
 * either may also just record what it sees and answer 0 (a visit in printing order). The
 * walk stops at the first 1. */
int em_stmt_any(const Stmt *s, int (*fs)(const Stmt *, void *), int (*fe)(const Expr *, void *), void *ctx);

/* ---------------------------------------------------------------- names */

/* A printed name bound to a Var or Buffer (key); live: visible to lookups that ask for it. */
typedef struct {
    const void *key;
    char *name;
    int live;
} EmBinding;

/* A stack of bindings, innermost last. */
typedef struct {
    EmBinding *items;
    int n, cap;
} EmScope;

/* Push a binding (name is the scope's to free when free_names is passed below). Returns its
 * index. */
int em_scope_push(EmScope *s, const void *key, char *name, int live);
/* The innermost binding of key (only a live one when live_only), or NULL. */
const EmBinding *em_scope_find(const EmScope *s, const void *key, int live_only);
/* Does any binding print as name? */
int em_scope_has_name(const EmScope *s, const char *name);
/* Drop the bindings above mark (freeing their names when free_names). */
void em_scope_pop(EmScope *s, int mark, int free_names);

/* A heap copy of s (em_scope_pop frees names with free). */
char *em_strdup(const char *s);
/* Any string as an identifier of a C-like language (malloc'd): characters other than
 * ASCII letters, digits and '_' become '_'; the empty string becomes `empty`; a leading
 * digit gets "v_"; with impl_names, a name C reserves for the implementation ("_X",
 * "__x") gets a "v". ASCII tests, so the locale cannot change the result. */
char *em_ident_base(const char *s, const char *empty, int impl_names);
/* base itself when taken(ctx, base) is 0, else the first free of base_1, base_2, ...
 * (malloc'd; base is the caller's). */
char *em_unique_name(const char *base, int (*taken)(void *ctx, const char *s), void *ctx);

/* ---------------------------------------------------------------- text */

/* Append text for the inside of a block comment: "*" "/" and "/" "*" are broken up (the
 * second would trip -Wcomment), newlines become spaces. */
void em_comment_text(StrBuf *o, const char *text);
/* A header comment's further lines: "\n * NOTE" for each note (char*); with bare_empty an
 * empty note is "\n *", without a trailing space. */
void em_comment_notes(StrBuf *o, const PtrVec *notes, int bare_empty);
/* The shortest "%.*g" form of v that reads back as the same value (as a float when f32),
 * spelled out in full when its decimal exponent is in [0, whole_below). Into buf. */
void em_shortest_g(char *buf, size_t n, double v, int f32, int whole_below);

/* A one-element local buffer (an accumulator, a selected value) prints as a scalar. */
int em_is_scalar(const Buffer *b);

/* fn's spelling in a list of overrides ending at a NULL name, or NULL. */
const char *em_math_override(const EmMathName *list, MathFn fn);

#endif
