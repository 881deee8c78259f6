/*
 * message.c: error messages as the terminal shows them.
 * Program layer. A message may hold what a data file or a script put in it:
 * a NUL byte (printf's %s would stop there), escape sequences that recolour
 * or clear the terminal, newlines that forge a second "kvplan:" line. Every
 * byte is written; control bytes are shown as \n, \t, \r or \xHH; a message
 * past 4096 bytes is cut with a count of what was left out. The traceback
 * that --traceback adds keeps its own newlines and tabs.
 */
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
