/*
 * afile.h: files replaced atomically, the one way kvplan writes a report.
 * Output layer: no Lua; writes files, never prints or exits.
 *
 * kvp_afile_open makes a unique temporary beside the target (mkstemp of
 * "PATH.tmp.XXXXXX", so it is on the same file system and never follows a
 * planted name); every write is checked; kvp_afile_commit flushes, fsyncs,
 * closes and renames it over PATH, so readers see the old file or the whole
 * new one, never a part. A failure at any step removes the temporary and
 * leaves PATH as it was. Open temporaries are kept in a list that a signal
 * handler may walk (kvp_afile_abandon_all): SIGINT in the middle of a report
 * removes the temporary too.
 */
#ifndef KVP_AFILE_H
#define KVP_AFILE_H

#include <stddef.h>

typedef struct kvp_afile kvp_afile;

/* path NULL or "-" is standard output (written through, never renamed);
 * so is an existing file that is not a regular file (a device such as
 * /dev/null, a FIFO, a socket): it is opened and written in place, since a
 * rename would replace the node itself; and so is one of the process's own
 * descriptors (/dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N),
 * written through a duplicate of it even when it is a regular file. A
 * directory is an error. NULL on failure, reason in err. */
kvp_afile *kvp_afile_open(const char *path, char *err, size_t errlen);
/* 1 when kvp_afile_open(path) writes in place (the cases above), 0 when it
 * replaces a file (path absent or a regular file). */
int kvp_afile_in_place(const char *path);
/* Append n bytes; 0 or -1. After a failure every later write fails too and
 * commit reports the first error. */
int kvp_afile_write(kvp_afile *f, const void *p, size_t n);
/* fsync, close, rename into place; frees f. 0, or -1 with the reason in err
 * (and the target untouched). */
int kvp_afile_commit(kvp_afile *f, char *err, size_t errlen);
/* Drop: close and remove the temporary; frees f. */
void kvp_afile_discard(kvp_afile *f);
/* The temporary's path (NULL for standard output and a file written in
 * place), for a program that
 * writes the file itself (gnuplot): it rewrites that file in place, and
 * kvp_afile_commit renames it as usual. */
const char *kvp_afile_temp(const kvp_afile *f);
/* The target ("standard output" for standard output). */
const char *kvp_afile_path(const kvp_afile *f);
/* errno of the first failed write, 0 if none. */
int kvp_afile_error(const kvp_afile *f);
/* 1 when f writes to a terminal (standard output or a device in place). */
int kvp_afile_is_terminal(const kvp_afile *f);

/* The files kvp_afile_commit renamed into place since the last
 * kvp_afile_forget (never standard output or a file written in place), by
 * path and the device and inode renamed there: a program removes a failed
 * run's outputs with kvp_afile_remove_committed. */
size_t kvp_afile_committed(void);
/* Remove every file of that list still the file committed there (same
 * device and inode: a later commit or another program's file at that path
 * is left), each told its path and 0, or the errno of a failed unlink;
 * then forget the list. Returns how many were removed. */
int kvp_afile_remove_committed(void (*each)(const char *path, int err, void *ud), void *ud);
/* Empty the list (a new run). */
void kvp_afile_forget(void);

/* For a signal handler: remove every open temporary. Async-signal-safe;
 * each (also async-signal-safe, may be NULL) is told the target of every
 * file dropped. Returns how many were dropped. */
int kvp_afile_abandon_all(void (*each)(const char *target, void *ud), void *ud);

#endif
