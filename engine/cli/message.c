/*
 * message.c: error messages as the terminal shows them.
 * Program layer. A message may hold what a data file or a script put in it:
 * a NUL byte (printf's %s would stop there), escape sequences that recolour
 * or clear the terminal, newlines that forge a second "kvplan:" line. Every
 * byte is written; control bytes are shown as \n, \t, \r or \xHH; a message
 * past 4096 bytes is cut with a count of what was left out. The traceback
 * that --traceback adds keeps its own newlines and tabs. kvp_cli_nearest
 * finds the name a mistyped word meant (a command, for "did you mean").
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

#define MAX_SHOWN 4096

static void put_escaped(FILE *f, const char *s, size_t n, int keep_layout) {
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c >= 0x20 && c != 0x7f) putc(c, f);
    else if (keep_layout && (c == '\n' || c == '\t')) putc(c, f);
    else if (c == '\n') fputs("\\n", f);
    else if (c == '\t') fputs("\\t", f);
    else if (c == '\r') fputs("\\r", f);
    else fprintf(f, "\\x%02x", c);
  }
}

void kvp_cli_print_error(const char *msg, size_t len) {
  static const char tb[] = "\nstack traceback:\n";
  const char *t = NULL;
  for (size_t i = 0; i + sizeof tb - 1 <= len; i++) /* memmem is not C11 */
    if (msg[i] == '\n' && memcmp(msg + i, tb, sizeof tb - 1) == 0) t = msg + i;
  size_t body = t ? (size_t)(t - msg) : len;
  fputs("kvplan: ", stderr);
  put_escaped(stderr, msg, body < MAX_SHOWN ? body : MAX_SHOWN, 0);
  if (body > MAX_SHOWN) fprintf(stderr, "... (%zu more bytes)", body - MAX_SHOWN);
  if (t != NULL) put_escaped(stderr, t, len - body, 1);
  putc('\n', stderr);
  fflush(stderr);
}

/* The optimal string alignment distance of a and b (edits: a letter
 * changed, inserted, deleted, or two neighbours swapped), case-insensitive;
 * words past 63 letters are not compared (SIZE_MAX). */
static size_t distance(const char *a0, const char *b0) {
  size_t n = strlen(a0), m = strlen(b0);
  if (n > 63 || m > 63) return (size_t)-1;
  char a[64], b[64];
  for (size_t i = 0; i < n; i++) a[i] = (char)tolower((unsigned char)a0[i]);
  for (size_t j = 0; j < m; j++) b[j] = (char)tolower((unsigned char)b0[j]);
  size_t d[64][64];
  for (size_t i = 0; i <= n; i++) d[i][0] = i;
  for (size_t j = 0; j <= m; j++) d[0][j] = j;
  for (size_t i = 1; i <= n; i++)
    for (size_t j = 1; j <= m; j++) {
      size_t v = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
      if (d[i - 1][j] + 1 < v) v = d[i - 1][j] + 1;
      if (d[i][j - 1] + 1 < v) v = d[i][j - 1] + 1;
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v)
        v = d[i - 2][j - 2] + 1;
      d[i][j] = v;
    }
  return d[n][m];
}

const char *kvp_cli_nearest(const char *word, const char *const *names, size_t n) {
  const char *best = NULL;
  size_t len = strlen(word), most = len / 3 > 0 ? len / 3 : 1, bestd = (size_t)-1;
  for (size_t i = 0; i < n; i++) {
    size_t d = distance(word, names[i]);
    if (d <= most && d < len && d < bestd) best = names[i], bestd = d;
  }
  return best;
}
