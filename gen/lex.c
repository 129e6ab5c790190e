/* lex.c - the .kg lexer: source text to tokens with line and column, and the error format
 * every .kg message uses ("path:line:col: error: ...", the source line, a caret line).
 */
#include "gen.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- error format */

/* Bytes of the UTF-8 sequence at s (at most n bytes), 0 if it is not valid UTF-8. */
static int utf8_len(const unsigned char *s, size_t n)
{
    int len = s[0] < 0x80 ? 1 : (s[0] & 0xe0) == 0xc0 ? 2 : (s[0] & 0xf0) == 0xe0 ? 3 : (s[0] & 0xf8) == 0xf0 ? 4 : 0;
    if (!len || (size_t)len > n || (len == 2 && s[0] < 0xc2))
        return 0;
    for (int i = 1; i < len; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    return len;
}

/* Append one displayed character of the source line: printable ASCII and valid UTF-8 as
 * they are, tabs kept (so the caret lines up), anything else as '?'. Returns the bytes
 * consumed. The caret line gets a tab or a space for it. */
static size_t show_char(StrBuf *line, StrBuf *caret, const unsigned char *s, size_t n)
{
    int len = utf8_len(s, n);
    if (s[0] == '\t') {
        sb_puts(line, "\t");
        if (caret)
            sb_puts(caret, "\t");
        return 1;
    }
    if (len > 1 || (len == 1 && s[0] >= 0x20 && s[0] < 0x7f)) {
        sb_printf(line, "%.*s", len, (const char *)s);
    } else {
        sb_puts(line, "?");
        len = 1;
    }
    if (caret)
        sb_puts(caret, " ");
    return (size_t)len;
}

#define SHOW_MAX 160   /* longest source excerpt printed under a message */

int gen_src_error(const char *path, const char *text, int line, int col, const char *fmt, ...)
{
    char msg[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (!path)
        path = "<input>";
    if (line <= 0 || !text)
        return ir_fail("%s: error: %s", path, msg);

    /* find the line */
    const unsigned char *s = (const unsigned char *)text;
    for (int l = 1; l < line && *s; s++)
        if (*s == '\n')
            l++;
    size_t len = 0;
    while (s[len] && s[len] != '\n')
        len++;
    if (len && s[len - 1] == '\r')
        len--;
    size_t at = col > 0 ? (size_t)col - 1 : 0;
    if (at > len)
        at = len;

    /* a window around the column when the line is long */
    size_t from = 0, to = len;
    if (len > SHOW_MAX) {
        from = at > SHOW_MAX / 2 ? at - SHOW_MAX / 2 : 0;
        while (from > 0 && from < len && (s[from] & 0xc0) == 0x80)
            from--;   /* do not start inside a UTF-8 sequence */
        to = from + SHOW_MAX < len ? from + SHOW_MAX : len;
    }
    StrBuf src = {0}, caret = {0};
    if (from > 0) {
        sb_puts(&src, "...");
        sb_puts(&caret, "   ");
    }
    size_t i = from;
    while (i < to)
        i += show_char(&src, i < at ? &caret : NULL, s + i, to - i);
    if (to < len)
        sb_puts(&src, "...");
    sb_puts(&caret, "^");
    ir_fail("%s:%d:%d: error: %s\n%s\n%s", path, line, col, msg, src.data ? src.data : "", caret.data);
    sb_free(&src);
    sb_free(&caret);
    return -1;
}

/* ---------------------------------------------------------------- tokens */

typedef struct {
    const char *path, *text;
    const unsigned char *s;
    size_t i, line_start;
    int line;
    GenTok *toks;
    int n, cap;
} Lexer;

static int lex_error(Lexer *lx, size_t at, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return gen_src_error(lx->path, lx->text, lx->line, (int)(at - lx->line_start) + 1, "%s", msg);
}

static GenTok *push(Lexer *lx, GenTokKind kind, size_t start, size_t len)
{
    if (lx->n == lx->cap)
        lx->toks = ir_grow(lx->toks, &lx->cap, sizeof *lx->toks, 256);
    GenTok *t = &lx->toks[lx->n++];
    memset(t, 0, sizeof *t);
    t->kind = kind;
    t->s = (const char *)lx->s + start;
    t->len = (int)len;
    t->line = lx->line;
    t->col = (int)(start - lx->line_start) + 1;
    return t;
}

static int is_alpha(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static int is_digit(int c) { return c >= '0' && c <= '9'; }
static int is_alnum(int c) { return is_alpha(c) || is_digit(c); }
static int hex_value(int c)
{
    return is_digit(c) ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static int lex_number(Lexer *lx)
{
    const unsigned char *s = lx->s;
    size_t start = lx->i, i = start;
    int is_float = 0, hex = 0;
    if (s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X') && hex_value(s[i + 2]) >= 0) {
        hex = 1;
        i += 2;
        while (hex_value(s[i]) >= 0)
            i++;
    } else {
        while (is_digit(s[i]))
            i++;
        if (s[i] == '.') {
            is_float = 1;
            i++;
            while (is_digit(s[i]))
                i++;
        }
        if ((s[i] == 'e' || s[i] == 'E') &&
            (is_digit(s[i + 1]) || ((s[i + 1] == '+' || s[i + 1] == '-') && is_digit(s[i + 2])))) {
            is_float = 1;
            i += 2;
            while (is_digit(s[i]))
                i++;
        }
    }
    size_t end = i;
    while (is_alnum(s[end]) || s[end] == '.')
        end++;
    size_t len = end - start;
    if (len > GEN_MAX_NAME)
        return lex_error(lx, start, "number too long (more than %d characters)", GEN_MAX_NAME);
    if (end != i)
        return lex_error(lx, start, "invalid number '%.*s'", (int)len, (const char *)s + start);
    GenTok *t = push(lx, is_float ? GT_FLOAT : GT_INT, start, len);
    if (is_float) {
        char buf[GEN_MAX_NAME + 1];
        memcpy(buf, s + start, len);
        buf[len] = 0;
        errno = 0;
        t->fval = strtod(buf, NULL);
        if (isinf(t->fval))
            return lex_error(lx, start, "float literal '%s' is out of range", buf);
    } else {
        uint64_t v = 0;
        int base = hex ? 16 : 10;
        for (size_t k = start + (hex ? 2 : 0); k < i; k++) {
            int d = hex_value(s[k]);
            if (v > ((uint64_t)INT64_MAX - (uint64_t)d) / (uint64_t)base)
                return lex_error(lx, start, "integer literal '%.*s' is too large (the limit is %lld)", (int)len,
                                 (const char *)s + start, (long long)INT64_MAX);
            v = v * (uint64_t)base + (uint64_t)d;
        }
        t->ival = (int64_t)v;
    }
    lx->i = end;
    return 0;
}

/* A line that ends with an operator, '=', ',' or an opening bracket goes on with the next:
 *     output Y[i < N] =
 *         A[i] * 2 +
 *         B[i]
 */
static int continues(const GenTok *t)
{
    return t->kind == GT_PUNCT && !(t->len == 1 && (t->s[0] == ')' || t->s[0] == ']' || t->s[0] == '}'));
}

/* Two-character operators first, so "<=" is not read as "<" "=". */
static const char *const punct2[] = {"<<", ">>", "<=", ">=", "==", "!=", "&&", "||"};
static const char punct1[] = "()[]{},:?=+-*/%<>&^|!~.";

int gen_lex(const char *path, const char *text, GenTok **toks, int *ntoks)
{
    *toks = NULL;
    *ntoks = 0;
    size_t size = strlen(text);
    if (size > GEN_MAX_SOURCE)
        return gen_src_error(path, NULL, 0, 0, "source too large (%zu bytes, the limit is %d)", size, GEN_MAX_SOURCE);
    Lexer lx = {path, text, (const unsigned char *)text, 0, 0, 1, NULL, 0, 0};
    const unsigned char *s = lx.s;
    for (;;) {
        int c = s[lx.i];
        if (c == 0)
            break;
        if (lx.n >= GEN_MAX_TOKENS) {
            free(lx.toks);
            return lex_error(&lx, lx.i, "too many tokens (the limit is %d)", GEN_MAX_TOKENS);
        }
        if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
            lx.i++;
            continue;
        }
        if (c == '\n') {
            if (lx.n > 0 && lx.toks[lx.n - 1].kind != GT_NEWLINE && !continues(&lx.toks[lx.n - 1])) {
                /* placed just after the line's last token, past nothing but blanks and comments */
                GenTok prev = lx.toks[lx.n - 1];
                GenTok *t = push(&lx, GT_NEWLINE, lx.i, 0);
                t->col = prev.col + prev.len;
            }
            lx.i++;
            lx.line++;
            lx.line_start = lx.i;
            continue;
        }
        if (c == '#') {
            while (s[lx.i] && s[lx.i] != '\n')
                lx.i++;
            continue;
        }
        if (is_alpha(c)) {
            size_t start = lx.i;
            while (is_alnum(s[lx.i]))
                lx.i++;
            if (lx.i - start > GEN_MAX_NAME) {
                lx.i = start;
                free(lx.toks);
                return lex_error(&lx, start, "name too long (more than %d characters)", GEN_MAX_NAME);
            }
            push(&lx, GT_NAME, start, lx.i - start);
            continue;
        }
        if (is_digit(c) || (c == '.' && is_digit(s[lx.i + 1]))) {
            if (lex_number(&lx)) {
                free(lx.toks);
                return -1;
            }
            continue;
        }
        if (c == '/' && s[lx.i + 1] == '/') {
            free(lx.toks);
            return lex_error(&lx, lx.i, "'//' is not an operator or a comment here; comments start with '#'");
        }
        size_t len = 0;
        for (size_t k = 0; k < sizeof punct2 / sizeof *punct2; k++)
            if (c == punct2[k][0] && s[lx.i + 1] == (unsigned char)punct2[k][1])
                len = 2;
        if (!len && strchr(punct1, c))
            len = 1;
        if (!len) {
            free(lx.toks);
            if (c >= 0x80)
                return lex_error(&lx, lx.i, "unexpected byte 0x%02x (only ASCII is allowed outside comments)", c);
            if (c < 0x20 || c == 0x7f)
                return lex_error(&lx, lx.i, "unexpected control character 0x%02x", c);
            return lex_error(&lx, lx.i, "unexpected character '%c'", c);
        }
        push(&lx, GT_PUNCT, lx.i, len);
        lx.i += len;
    }
    /* EOF sits just after the last token, so "found end of file" points somewhere useful */
    GenTok last = lx.n > 0 ? lx.toks[lx.n - 1] : (GenTok){0};
    if (lx.n > 0 && last.kind == GT_NEWLINE)
        last = lx.toks[lx.n - 2];
    GenTok *eof = push(&lx, GT_EOF, lx.i, 0);
    eof->line = lx.n > 1 ? last.line : 1;
    eof->col = lx.n > 1 ? last.col + last.len : 1;
    *toks = lx.toks;
    *ntoks = lx.n;
    return 0;
}

