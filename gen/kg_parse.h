/* kg_parse.h - the .kg parser's shared state, private to its three files: kg.c (tokens,
 * names, statements, the file), kg_expr.c (weak literals, expressions) and kg_sched.c
 * (schedule sections). The entry point, gen_parse_kg, is gen.h's. */
#ifndef KGEN_KG_PARSE_H
#define KGEN_KG_PARSE_H

#include "gen.h"

#define KG_MAX_NEST 200          /* nested parentheses, brackets, calls, unary operators */
#define KG_MAX_EXPR_DEPTH 1000   /* operations from an expression's root to its deepest leaf */
#define KG_MAX_SCOPE 256         /* axes in scope at once */
#define KG_MAX_REDUCE_AXES 16    /* axes of one reduction */
#define KG_MAX_CALL_ARGS 16      /* arguments parsed for one call */
#define KG_MAX_PARAMS 10000
#define KG_MAX_TENSORS 10000
#define KG_MAX_SECTIONS 64
#define KG_MAX_SCHED_STMTS 10000 /* statements in one schedule section */
#define KG_MAX_SCHED_ARGS 64     /* arguments of one schedule statement */
#define KG_MAX_LHS 4             /* names on the left of a schedule statement (tile) */
#define KG_MAX_ELEMS GEN_MAX_ELEMS /* elements of a tensor and extent of an axis: DT_INDEX is i32 */
#define KG_MAX_LOOPS 64          /* loops of one stage (schedule.c's MAX_LEAF) */

/* ---------------------------------------------------------------- parser state */

typedef struct {
    const char *name;
    int64_t value;
    GenTok *tok;
} Param;

typedef struct {
    char kind;          /* the signature letter it was parsed for (see prims[]) */
    GenTok *tok;        /* its first token */
    const char *name;   /* names, scopes and dotted bind tags */
    int64_t value;      /* constants */
} SArg;

typedef struct {
    int prim;              /* index into prims[] */
    int first, last;       /* token range of the whole statement */
    GenTok *prim_tok;
    GenTok *lhs[KG_MAX_LHS];
    int nlhs;
    SArg *args;
    int nargs;
} SStmt;

typedef struct {
    GenTok *name;
    PtrVec stmts;          /* SStmt* */
} Section;

typedef struct {
    const char *path, *text;
    GenTok *toks;
    int ntok, pos;
    GenTok *last;          /* the last token consumed */
    int brackets;          /* open ( and [: line ends inside them are skipped */
    int nest;              /* recursion depth of the expression parser */
    Define *defs;
    int ndefs;
    Program *prog;
    PtrVec params;         /* Param* */
    PtrVec tunables;       /* GenTunable*: `tune` lines */
    PtrVec sections;       /* Section* */
    const char *kernel_name;
    GenTok *kernel_tok;
    /* the expression being parsed */
    IterVar *scope[KG_MAX_SCOPE];
    int nscope;
    int cexpr;             /* a constant expression: only params and literals */
    GenTok *defining;      /* the tensor being defined (it may not read itself) */
    int in_scan_init;
    Tensor *scan;          /* the scan whose update is being parsed: it may read itself */
    Var *scan_time;
} P;

/* A parsed value: an expression, or a weak literal that takes the other operand's type. */
typedef struct {
    Expr *e;       /* NULL while weak */
    char weak;     /* 0, 'i' (i) or 'f' (f) */
    int64_t i;
    double f;
    int depth;     /* tree depth, bounded so later recursive passes cannot overflow the stack */
    GenTok *tok;   /* where it starts */
} Val;

/* ---------------------------------------------------------------- kg.c: errors and tokens */

/* kg_err: "path:line:col: error: ..." at token t, -1; kg_err_ir: the same with ir_errmsg().
 * kg_peek/kg_peek2 look ahead (skipping line ends inside brackets), kg_next consumes;
 * kg_accept consumes punctuator s if it is next, kg_expect fails unless it is. */

int kg_err(P *p, const GenTok *t, const char *fmt, ...);
int kg_err_ir(P *p, const GenTok *t);
int kg_teq(const GenTok *t, const char *s);
int kg_is_p(const GenTok *t, const char *s);
int kg_is_kw(const GenTok *t, const char *s);
int kg_same_tok(const GenTok *a, const GenTok *b);
char *kg_tokstr(const GenTok *t);
const char *kg_desc(const GenTok *t);
GenTok *kg_peek(P *p);
GenTok *kg_peek2(P *p);
GenTok *kg_next(P *p);
int kg_accept(P *p, const char *s);
int kg_expect(P *p, const char *s);
int kg_close_bracket(P *p, const GenTok *open, const char *closer);
int kg_end_of_stmt(P *p);

/* ---------------------------------------------------------------- kg.c: names */

/* The param, tensor or axis in scope named t (NULL if none); a new name's checks (-1 with
 * an error when it is reserved or taken). */

Param *kg_find_param(P *p, const GenTok *t);
Tensor *kg_find_tensor(P *p, const GenTok *t);
IterVar *kg_find_axis(P *p, const GenTok *t);
int kg_check_reserved(P *p, const GenTok *t);
int kg_check_new_axis(P *p, const GenTok *t);

/* ---------------------------------------------------------------- kg_expr.c: weak literals and expressions */

/* kg_lit_as: a weak literal as type t (-1 when it does not fit); kg_val_expr: a Val's
 * expression in its default type; kg_parse_expr: one expression; kg_parse_const: a
 * constant expression (params and literals); kg_parse_extent: an axis extent. */

Expr *kg_lit_as(P *p, const Val *v, DType t, const GenTok *at, const char *what);
Expr *kg_val_expr(const Val *v);
int kg_parse_expr(P *p, Val *out);
int kg_parse_const(P *p, int64_t *v);
int kg_parse_extent(P *p, const GenTok *axis, int64_t *v);

/* ---------------------------------------------------------------- kg_sched.c: schedule sections */

/* kg_parse_schedule: a `schedule NAME { ... }` section into p->sections; kg_stmt_text: a
 * statement as written; kg_check_section: a section for another target, its stage and axis names checked
 * by a simulation; kg_apply_stmt:
 * one statement applied to s. Each 0, or -1 with a positioned error. */

int kg_parse_schedule(P *p);
char *kg_stmt_text(P *p, const SStmt *st);
int kg_apply_stmt(P *p, Schedule *s, const SStmt *ss);
int kg_check_section(P *p, const Section *sec);

#endif
