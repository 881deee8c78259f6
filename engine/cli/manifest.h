/*
 * manifest.h: the lines of a batch manifest (kvplan batch -m FILE) read and
 * split into words (manifest.c). The program layer; no Lua, so a fuzz
 * target can link it alone (tests/fuzz/fuzz_manifest.c).
 */
#ifndef KVP_MANIFEST_H
#define KVP_MANIFEST_H

#include <stddef.h>
#include <stdio.h>

/* The next line of f without its newline, in a buffer of its own (free it),
 * whatever its length; *len its bytes. NULL at the end, and NULL with *bad
 * set and a message in err (naming path:lineno) when the line holds a NUL
 * byte (it would cut the line short) or f cannot be read; *bad = -1 when
 * out of memory. */
char *kvp_manifest_line(FILE *f, const char *path, int lineno, size_t *len, int *bad, char *err,
                        size_t errlen);
/* Split a line into words in place: blanks separate, "double quotes"
 * group (and are dropped), '#' starts a comment; the words point into line.
 * Returns the count, or -1 for an unbalanced quote or more than max words. */
int kvp_manifest_split(char *line, char **out, int max);
/* A report name 'NAME:' may give: letters, digits, '_', '.' or '-', 1 to
 * max - 1 bytes (as kvplan.report checks report names). */
int kvp_manifest_name_ok(const char *name, size_t max);

#endif
