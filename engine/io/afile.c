/*
 * afile.c: files replaced atomically (see afile.h).
 * Output layer: no Lua; writes files, never prints or exits.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "afile.h"

struct kvp_afile {
  int fd;
  int failed;                  /* errno of the first failure, 0 if none */
  int direct;                  /* an existing non-regular file written in place */
  char *path, *tmp;            /* NULL for standard output; tmp NULL when direct */
  kvp_afile *prev, *next;      /* the list of open temporaries */
};

/* The files committed by rename since kvp_afile_forget, oldest first. */
typedef struct committed {
  dev_t dev;
  ino_t ino;
  struct committed *next;
  char path[];
} committed;
static committed *done, **done_end = &done;
static size_t ndone;

/* Open temporaries. Changed only with the catchable signals blocked, so a
 * handler that walks it sees a whole list. */
static kvp_afile *open_list;

static void block(sigset_t *old) {
  sigset_t all;
  sigfillset(&all);
  sigprocmask(SIG_BLOCK, &all, old);
}

static void unblock(const sigset_t *old) { sigprocmask(SIG_SETMASK, old, NULL); }

static void link_in(kvp_afile *f) {
  f->prev = NULL;
  f->next = open_list;
  if (open_list) open_list->prev = f;
  open_list = f;
}

static void unlink_out(kvp_afile *f) {
  if (f->prev) f->prev->next = f->next;
  else if (open_list == f) open_list = f->next;
  if (f->next) f->next->prev = f->prev;
  f->prev = f->next = NULL;
}

static void release(kvp_afile *f) {
  free(f->path);
  free(f->tmp);
  free(f);
}

/* The descriptor a path names when the path is one of the process's own
 * descriptors (/dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N), else
 * -1. Such a path is a symbolic link into /proc; when the descriptor is a
 * regular file (standard output redirected to a file), stat follows the
 * link to that file and the rename would replace the link itself, as root
 * the system's /dev/stdout. These are written through a duplicate of the
 * descriptor, at its offset, as a program writing to it directly would. */
static int own_descriptor(const char *path) {
  if (strcmp(path, "/dev/stdout") == 0) return STDOUT_FILENO;
  if (strcmp(path, "/dev/stderr") == 0) return STDERR_FILENO;
  const char *p = strncmp(path, "/dev/fd/", 8) == 0         ? path + 8
                  : strncmp(path, "/proc/self/fd/", 14) == 0 ? path + 14
                                                              : NULL;
  if (p == NULL || *p == '\0') return -1;
  int v = 0;
  for (; *p != '\0'; p++) {
    if (*p < '0' || *p > '9' || v > 100000000) return -1;
    v = v * 10 + (*p - '0');
  }
  return v;
}

int kvp_afile_in_place(const char *path) {
  struct stat st;
  return path == NULL || strcmp(path, "-") == 0 || own_descriptor(path) >= 0 ||
         (stat(path, &st) == 0 && !S_ISREG(st.st_mode));
}

kvp_afile *kvp_afile_open(const char *path, char *err, size_t errlen) {
  kvp_afile *f = calloc(1, sizeof *f);
  if (f == NULL) {
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  if (path == NULL || strcmp(path, "-") == 0) {
    f->fd = STDOUT_FILENO;
    return f;
  }
  size_t n = strlen(path);
  if (n == 0 || path[n - 1] == '/') { /* "" and "dir/" name no file to write */
    snprintf(err, errlen, "cannot write '%s': %s", path,
             n == 0 ? "the file name is empty" : "the name ends in '/' (expected a file name)");
    release(f);
    return NULL;
  }
  /* A device, FIFO or socket (/dev/null, a named pipe) is written in
   * place: renaming a file over it would replace the device node itself
   * (as root, /dev/null would become a regular file). So is one of the
   * process's own descriptors (own_descriptor). */
  int own = own_descriptor(path);
  struct stat st;
  if (own >= 0 || (stat(path, &st) == 0 && !S_ISREG(st.st_mode))) {
    if (own < 0 && S_ISDIR(st.st_mode)) {
      snprintf(err, errlen, "cannot write '%s': it is a directory", path);
      release(f);
      return NULL;
    }
    f->path = malloc(n + 1);
    if (f->path == NULL) {
      snprintf(err, errlen, "out of memory");
      release(f);
      return NULL;
    }
    memcpy(f->path, path, n + 1);
    f->fd = own >= 0 ? fcntl(own, F_DUPFD_CLOEXEC, 0) : open(path, O_WRONLY | O_CLOEXEC);
    if (f->fd < 0) {
      snprintf(err, errlen, "cannot %s '%s': %s", own >= 0 ? "write" : "open", path,
               strerror(errno));
      release(f);
      return NULL;
    }
    f->direct = 1;
    return f;
  }
  f->path = malloc(n + 1);
  f->tmp = malloc(n + 16);
  if (f->path == NULL || f->tmp == NULL) {
    snprintf(err, errlen, "out of memory");
    release(f);
    return NULL;
  }
  memcpy(f->path, path, n + 1);
  snprintf(f->tmp, n + 16, "%s.tmp.XXXXXX", path);
  sigset_t old;
  block(&old);
  f->fd = mkstemp(f->tmp);
  int e = errno;
  if (f->fd >= 0) link_in(f);
  unblock(&old);
  if (f->fd < 0) { /* named by the file asked for, not the temporary's random name */
    const char *slash = strrchr(path, '/');
    int dn = slash == NULL ? 1 : slash == path ? 1 : (int)(slash - path);
    snprintf(err, errlen, "cannot write '%s': %s (creating a file in '%.*s')", path, strerror(e),
             dn, slash == NULL ? "." : path);
    release(f);
    return NULL;
  }
  mode_t mask = umask(0);
  umask(mask);
  fchmod(f->fd, 0666 & ~mask); /* as open(2) would have made it */
  return f;
}

int kvp_afile_write(kvp_afile *f, const void *p, size_t n) {
  const char *s = p;
  if (f->failed) return -1;
  while (n > 0) {
    ssize_t k = write(f->fd, s, n);
    if (k < 0) {
      if (errno == EINTR) continue;
      f->failed = errno;
      return -1;
    }
    if (k == 0) { /* no progress and no error: treat as a full device */
      f->failed = ENOSPC;
      return -1;
    }
    s += k;
    n -= (size_t)k;
  }
  return 0;
}

const char *kvp_afile_temp(const kvp_afile *f) { return f->tmp; }

const char *kvp_afile_path(const kvp_afile *f) { return f->path ? f->path : "standard output"; }

int kvp_afile_error(const kvp_afile *f) { return f->failed; }

int kvp_afile_is_terminal(const kvp_afile *f) { return f->tmp == NULL && isatty(f->fd); }

/* Remove the temporary (signals blocked by the caller). */
static void drop(kvp_afile *f) {
  unlink_out(f);
  unlink(f->tmp);
}

int kvp_afile_commit(kvp_afile *f, char *err, size_t errlen) {
  int rc = 0;
  if (f->failed) {
    snprintf(err, errlen, "cannot write '%s': %s", kvp_afile_path(f), strerror(f->failed));
    rc = -1;
  }
  if (f->tmp == NULL) {
    if (f->direct && close(f->fd) < 0 && rc == 0) {
      snprintf(err, errlen, "cannot write '%s': %s", f->path, strerror(errno));
      rc = -1;
    }
    release(f);
    return rc;
  }
  if (rc == 0 && fsync(f->fd) < 0 && errno != EINVAL) {
    snprintf(err, errlen, "cannot write '%s': %s", f->path, strerror(errno));
    rc = -1;
  }
  /* the record of the commit, made before the rename: a file kvplan cannot
   * list as written (out of memory) is not renamed into place */
  committed *c = NULL;
  struct stat st;
  if (rc == 0) {
    size_t len = strlen(f->path);
    c = malloc(sizeof *c + len + 1);
    if (c == NULL || fstat(f->fd, &st) < 0) {
      snprintf(err, errlen, "cannot write '%s': %s", f->path,
               c == NULL ? "out of memory (recording the file written)" : strerror(errno));
      rc = -1;
    } else {
      c->dev = st.st_dev;
      c->ino = st.st_ino;
      memcpy(c->path, f->path, len + 1);
    }
  }
  if (close(f->fd) < 0 && rc == 0) {
    snprintf(err, errlen, "cannot write '%s': %s", f->path, strerror(errno));
    rc = -1;
  }
  sigset_t old;
  block(&old);
  if (rc == 0 && rename(f->tmp, f->path) < 0) {
    snprintf(err, errlen, "cannot rename '%s' to '%s': %s", f->tmp, f->path, strerror(errno));
    rc = -1;
  }
  if (rc != 0) drop(f);
  else unlink_out(f);
  unblock(&old);
  if (rc == 0) {
    c->next = NULL;
    *done_end = c;
    done_end = &c->next;
    ndone++;
  } else {
    free(c);
  }
  if (rc == 0) { /* make the rename itself durable; a directory that cannot be synced is no error */
    char *slash = strrchr(f->path, '/');
    if (slash != NULL) *slash = '\0';
    int dfd = open(slash == NULL ? "." : slash == f->path ? "/" : f->path, O_RDONLY);
    if (dfd >= 0) {
      fsync(dfd);
      close(dfd);
    }
  }
  release(f);
  return rc;
}

void kvp_afile_discard(kvp_afile *f) {
  if (f->direct) close(f->fd);
  if (f->tmp != NULL) {
    sigset_t old;
    block(&old);
    close(f->fd);
    drop(f);
    unblock(&old);
  }
  release(f);
}

size_t kvp_afile_committed(void) { return ndone; }

void kvp_afile_forget(void) {
  while (done != NULL) {
    committed *c = done;
    done = c->next;
    free(c);
  }
  done_end = &done;
  ndone = 0;
}

int kvp_afile_remove_committed(void (*each)(const char *path, int err, void *ud), void *ud) {
  int n = 0;
  for (committed *c = done; c != NULL; c = c->next) {
    struct stat st;
    if (lstat(c->path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_dev != c->dev ||
        st.st_ino != c->ino)
      continue; /* gone, or another file there now (a later commit of the path is its own entry) */
    int e = unlink(c->path) == 0 ? 0 : errno;
    if (e == 0) n++;
    if (each) each(c->path, e, ud);
  }
  kvp_afile_forget();
  return n;
}

int kvp_afile_abandon_all(void (*each)(const char *target, void *ud), void *ud) {
  int n = 0;
  for (kvp_afile *f = open_list; f != NULL; f = f->next) {
    unlink(f->tmp);
    if (each) each(f->path, ud);
    n++;
  }
  open_list = NULL;
  return n;
}
