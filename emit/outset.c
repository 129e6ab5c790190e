/* outset.c - the generated files of one run, held in memory and written all at once.
 *
 * Why: a failure half-way (a full disk, a bad directory) must not leave a mix of new and
 * stale files that still compile. Every file is first written as DIR/.NAME.tmp; only when
 * all of them are complete are they renamed over their final names (rename is atomic on
 * POSIX file systems). On an error the temporaries are removed.
 */
#define _POSIX_C_SOURCE 200809L

#include "emit.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#define OUT_MAX_FILES ((int)(sizeof ((OutSet *)0)->files / sizeof ((OutSet *)0)->files[0]))

/* Adding a name twice starts that file again (the last writer wins). */
const char *em_file_base(const Kernel *k, const char *name)
{
    if (!name)
        name = k->name;
    if (!name || !name[0] || name[0] == '.' || strpbrk(name, "/\\\"\n")) {
        ir_fail("cannot use '%s' as an output file name", name ? name : "");
        return NULL;
    }
    return name;
}

StrBuf *em_outset_add(OutSet *o, const char *name)
{
    for (int i = 0; i < o->n; i++) {
        if (strcmp(o->files[i].name, name) == 0) {
            o->files[i].text.len = 0;
            if (o->files[i].text.data)
                o->files[i].text.data[0] = 0;
            return &o->files[i].text;
        }
    }
    if (o->n >= OUT_MAX_FILES)
        ir_die("too many output files (limit %d)", OUT_MAX_FILES);
    size_t len = strlen(name) + 1;
    char *copy = malloc(len);
    if (!copy)
        ir_die("out of memory");
    memcpy(copy, name, len);
    OutFile *f = &o->files[o->n++];
    memset(f, 0, sizeof *f);
    f->name = copy;
    return &f->text;
}

void em_outset_free(OutSet *o)
{
    for (int i = 0; i < o->n; i++) {
        free((char *)o->files[i].name);
        sb_free(&o->files[i].text);
    }
    o->n = 0;
}

/* mkdir -p. Returns 0, or -1 with errno set. */
static int make_dirs(const char *dir)
{
    size_t len = strlen(dir);
    char *path = malloc(len + 1);
    if (!path)
        ir_die("out of memory");
    memcpy(path, dir, len + 1);
    for (size_t i = 1; i <= len; i++) {
        if (path[i] != '/' && path[i] != 0)
            continue;
        if (path[i - 1] == '/')          /* "a//b" or a trailing '/' */
            continue;
        char c = path[i];
        path[i] = 0;
        if (mkdir(path, 0777) != 0) {
            struct stat st;
            int err = errno;
            if (err != EEXIST || stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) {
                if (err == EEXIST)
                    err = ENOTDIR;
                free(path);
                errno = err;
                return -1;
            }
        }
        path[i] = c;
    }
    free(path);
    return 0;
}

static char *join(const char *dir, const char *pre, const char *name, const char *post)
{
    size_t n = strlen(dir) + strlen(pre) + strlen(name) + strlen(post) + 2;
    char *p = malloc(n);
    if (!p)
        ir_die("out of memory");
    snprintf(p, n, "%s/%s%s%s", dir, pre, name, post);
    return p;
}

static void free_paths(char **paths, int n)
{
    for (int i = 0; i < n; i++)
        free(paths[i]);
}

int em_outset_write(OutSet *o, const char *dir)
{
    char *tmp[OUT_MAX_FILES] = {0}, *dst[OUT_MAX_FILES] = {0};
    int n = o->n, rc = 0;
    if (!dir || !dir[0])
        dir = ".";
    for (int i = 0; i < n; i++)
        if (!o->files[i].name[0] || strchr(o->files[i].name, '/'))
            return ir_fail("bad output file name '%s'", o->files[i].name);
    if (make_dirs(dir) != 0)
        return ir_fail("cannot create directory %s: %s", dir, strerror(errno));
    for (int i = 0; i < n; i++) {
        tmp[i] = join(dir, ".", o->files[i].name, ".tmp");
        dst[i] = join(dir, "", o->files[i].name, "");
    }

    int written = 0;
    for (; written < n; written++) {
        const StrBuf *t = &o->files[written].text;
        FILE *f = fopen(tmp[written], "wb");
        if (!f) {
            rc = ir_fail("cannot write %s: %s", tmp[written], strerror(errno));
            break;
        }
        int err = 0;
        errno = 0;
        if (t->len && fwrite(t->data, 1, t->len, f) != t->len)
            err = errno ? errno : EIO;
        if (fclose(f) != 0 && !err)
            err = errno ? errno : EIO;
        if (err) {
            rc = ir_fail("cannot write %s: %s", tmp[written], strerror(err));
            written++;                   /* it exists: remove it below */
            break;
        }
    }
    if (rc != 0) {
        for (int i = 0; i < written; i++)
            remove(tmp[i]);
        free_paths(tmp, n);
        free_paths(dst, n);
        return rc;
    }

    for (int i = 0; i < n; i++) {
        if (rename(tmp[i], dst[i]) != 0) {
            rc = ir_fail("cannot rename %s to %s: %s", tmp[i], dst[i], strerror(errno));
            for (int j = i; j < n; j++)
                remove(tmp[j]);
            break;
        }
    }
    free_paths(tmp, n);
    free_paths(dst, n);
    return rc;
}

int em_fill(StrBuf *o, const char *t, const char *name, const char *const *vars)
{
    for (const char *p; (p = strstr(t, "{{")) != NULL;) {
        const char *end = strstr(p + 2, "}}");
        if (!end)
            return ir_fail("template %s: an unclosed {{ placeholder", name);
        size_t n = (size_t)(end - p - 2);
        const char *const *v = vars;
        while (*v && (strlen(*v) != n || strncmp(*v, p + 2, n)))
            v += 2;
        if (!*v)
            return ir_fail("template %s: no value for {{%.*s}}", name, (int)n, p + 2);
        sb_printf(o, "%.*s%s", (int)(p - t), t, v[1]);
        t = end + 2;
    }
    sb_puts(o, t);
    return 0;
}

int em_template_fill(StrBuf *o, const char *name, const char *const *vars)
{
    const char *t = em_template(name);
    if (!t)
        return ir_fail("the %s template is missing from this build", name);
    return em_fill(o, t, name, vars);
}
