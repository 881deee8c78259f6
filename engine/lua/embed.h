/*
 * embed.h: the embedded stdlib table, generated at build time by embed.c
 * (a build tool) into build/stdlib.c and read by kvp_preload (kvplan_lua.c).
 * Binding layer.
 */
#ifndef KVP_EMBED_H
#define KVP_EMBED_H

#include <stddef.h>

typedef struct kvp_blob {
  const char *name;   /* module name, "kvplan.units" */
  const char *chunk;  /* chunk name, "@stdlib/kvplan/units.lua" */
  const char *data;
  size_t len;
} kvp_blob;

extern const kvp_blob kvp_stdlib[];

#endif
