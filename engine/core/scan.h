/*
 * scan.h: which of a set of literal strings occur in a text, in one pass
 * over the text (scan.c). The startup-log reader (stdlib/kvplan/validate.lua)
 * asks each block of a log which of some 230 literals it holds, each the
 * plain run every match of one of its patterns contains: a block holding
 * none of a pattern's literal is not searched for that pattern. One pass
 * instead of one search a literal keeps a 1 GB log's reading within seconds.
 * Pure computation: no Lua, no I/O. Included by kvplan.h.
 */
#ifndef KVP_SCAN_H
#define KVP_SCAN_H

#include <stddef.h>
#include <stdint.h>

/* The most literals one scan takes (each at least 3 bytes long). */
#define KVP_SCAN_MAX 4096

/* found[i] = 1 when lits[i] (lens[i] bytes, lens[i] >= 3, any bytes) occurs in
 * text[0..n), else 0, for i < count <= KVP_SCAN_MAX. A filter on every
 * position's first three bytes (a 65536-bit table of the literals' first
 * three bytes, hashed), then a compare with each literal of that hash:
 * linear in n, whatever the literals. KVP_EINVAL naming the literal when one
 * is shorter than 3 bytes or count is past KVP_SCAN_MAX. */
kvp_err kvp_scan_literals(const char *text, size_t n, const char *const *lits, const size_t *lens,
                          size_t count, unsigned char *found, kvp_diag *diag);

/* The newlines in text[0..n) (*lines) and the offset of the last one (*last,
 * n when there is none): where a block of whole lines ends. */
void kvp_scan_lines(const char *text, size_t n, size_t *lines, size_t *last);

#endif
