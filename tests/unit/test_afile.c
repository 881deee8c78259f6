/* test_afile.c: the atomic writer: whole file or none, checked writes,
 * temporaries removed on failure, on discard and by a signal handler. */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "afile.h"

static char dir[] = "/tmp/kvplan_test_afile_XXXXXX";
static char path[512], other[512];

static int setup(void **state) {
  (void)state;
  if (mkdtemp(dir) == NULL) return -1;
  snprintf(path, sizeof path, "%s/r.csv", dir);
  snprintf(other, sizeof other, "%s/other.txt", dir);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  unlink(path);
  unlink(other);
  return rmdir(dir);
}

static const char *slurp(const char *p) {
  static char buf[4096];
  FILE *f = fopen(p, "rb");
  if (f == NULL) return NULL;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = '\0';
  fclose(f);
  return buf;
}

static void put(const char *p, const char *s) {
  FILE *f = fopen(p, "wb");
  fputs(s, f);
  fclose(f);
}

/* Files in dir other than `path` and `other`: temporaries left behind. */
static int strays(void) {
  DIR *d = opendir(dir);
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL)
    n += e->d_name[0] != '.' && strcmp(e->d_name, "r.csv") != 0 && strcmp(e->d_name, "other.txt") != 0;
  closedir(d);
  return n;
}

static void commit_replaces_the_file_whole(void **state) {
  (void)state;
  char err[256];
  put(path, "old\n");
  kvp_afile *f = kvp_afile_open(path, err, sizeof err);
  assert_non_null(f);
  assert_int_equal(kvp_afile_write(f, "new\n", 4), 0);
  assert_string_equal(slurp(path), "old\n"); /* not yet */
  assert_int_equal(strays(), 1);             /* the temporary */
  assert_int_equal(kvp_afile_commit(f, err, sizeof err), 0);
  assert_string_equal(slurp(path), "new\n");
  assert_int_equal(strays(), 0);
}

static void discard_keeps_the_old_file(void **state) {
  (void)state;
  char err[256];
  put(path, "old\n");
  kvp_afile *f = kvp_afile_open(path, err, sizeof err);
  kvp_afile_write(f, "half", 4);
  kvp_afile_discard(f);
  assert_string_equal(slurp(path), "old\n");
  assert_int_equal(strays(), 0);
}

/* A file size limit makes write(2) fail with EFBIG, as a full disk fails
 * with ENOSPC: the commit must report it and keep the old file. */
static void a_failed_write_is_an_error_and_keeps_the_old_file(void **state) {
  (void)state;
  char err[256], block[4096];
  memset(block, 'x', sizeof block);
  put(path, "old\n");
  struct rlimit old, small = {8192, 8192};
  getrlimit(RLIMIT_FSIZE, &old);
  small.rlim_max = old.rlim_max;
  signal(SIGXFSZ, SIG_IGN);
  assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
  kvp_afile *f = kvp_afile_open(path, err, sizeof err);
  int rc = 0;
  for (int i = 0; i < 4 && rc == 0; i++) rc = kvp_afile_write(f, block, sizeof block);
  setrlimit(RLIMIT_FSIZE, &old);
  assert_int_equal(rc, -1);
  assert_int_equal(kvp_afile_write(f, "x", 1), -1); /* sticky */
  assert_int_equal(kvp_afile_commit(f, err, sizeof err), -1);
  assert_non_null(strstr(err, "cannot write"));
  assert_non_null(strstr(err, "r.csv"));
  assert_string_equal(slurp(path), "old\n");
  assert_int_equal(strays(), 0);
}

/* A symlink planted at the target is replaced, never written through. */
static void a_planted_symlink_is_replaced_not_followed(void **state) {
  (void)state;
  char err[256];
  put(other, "precious\n");
  unlink(path);
  assert_int_equal(symlink(other, path), 0);
  kvp_afile *f = kvp_afile_open(path, err, sizeof err);
  kvp_afile_write(f, "report\n", 7);
  assert_int_equal(kvp_afile_commit(f, err, sizeof err), 0);
  assert_string_equal(slurp(other), "precious\n");
  struct stat st;
  assert_int_equal(lstat(path, &st), 0);
  assert_true(S_ISREG(st.st_mode));
  assert_string_equal(slurp(path), "report\n");
}

/* Two writers of the same target never share a temporary. */
static void two_writers_get_two_temporaries(void **state) {
  (void)state;
  char err[256];
  kvp_afile *a = kvp_afile_open(path, err, sizeof err), *b = kvp_afile_open(path, err, sizeof err);
  kvp_afile_write(a, "aaaa\n", 5);
  kvp_afile_write(b, "bb\n", 3);
  assert_int_equal(strays(), 2);
  assert_int_equal(kvp_afile_commit(a, err, sizeof err), 0);
  assert_string_equal(slurp(path), "aaaa\n");
  assert_int_equal(kvp_afile_commit(b, err, sizeof err), 0);
  assert_string_equal(slurp(path), "bb\n");
  assert_int_equal(strays(), 0);
}

static int dropped;
static void count(const char *target, void *ud) {
  (void)ud;
  dropped += strstr(target, "r.csv") != NULL;
}

static void a_signal_handler_can_remove_every_temporary(void **state) {
  (void)state;
  char err[256];
  put(path, "old\n");
  kvp_afile *a = kvp_afile_open(path, err, sizeof err), *b = kvp_afile_open(path, err, sizeof err);
  kvp_afile_write(a, "x", 1);
  assert_int_equal(strays(), 2);
  dropped = 0;
  assert_int_equal(kvp_afile_abandon_all(count, NULL), 2);
  assert_int_equal(dropped, 2);
  assert_int_equal(strays(), 0);
  assert_string_equal(slurp(path), "old\n");
  /* the handler would now exit; here the writers are still freed */
  kvp_afile_discard(a);
  kvp_afile_discard(b);
}

static void a_missing_directory_is_a_clear_error(void **state) {
  (void)state;
  char err[256], p[600];
  snprintf(p, sizeof p, "%s/no/such/dir/x.csv", dir);
  assert_null(kvp_afile_open(p, err, sizeof err));
  char want[800]; /* named by the file asked for and its directory, not the temporary */
  snprintf(want, sizeof want, "cannot write '%s': No such file or directory (creating a file in '%s/no/such/dir')",
           p, dir);
  assert_string_equal(err, want);
}

/* A device or a FIFO is written in place, never renamed over: as root a
 * rename onto /dev/null made it a regular file. A directory is an error. */
static void devices_and_fifos_are_written_in_place(void **state) {
  (void)state;
  char err[256], fifo[600];
  kvp_afile *f = kvp_afile_open("/dev/null", err, sizeof err);
  assert_non_null(f);
  assert_null(kvp_afile_temp(f));
  assert_int_equal(kvp_afile_write(f, "report\n", 7), 0);
  assert_int_equal(kvp_afile_commit(f, err, sizeof err), 0);
  struct stat st;
  assert_int_equal(lstat("/dev/null", &st), 0);
  assert_true(S_ISCHR(st.st_mode));
  snprintf(fifo, sizeof fifo, "%s/pipe", dir);
  assert_int_equal(mkfifo(fifo, 0600), 0);
  int r = open(fifo, O_RDONLY | O_NONBLOCK);
  assert_true(r >= 0);
  f = kvp_afile_open(fifo, err, sizeof err);
  assert_non_null(f);
  assert_int_equal(kvp_afile_write(f, "row\n", 4), 0);
  assert_int_equal(kvp_afile_commit(f, err, sizeof err), 0);
  char buf[8] = {0};
  assert_int_equal(read(r, buf, sizeof buf - 1), 4);
  assert_string_equal(buf, "row\n");
  close(r);
  assert_int_equal(lstat(fifo, &st), 0);
  assert_true(S_ISFIFO(st.st_mode));
  unlink(fifo);
  assert_null(kvp_afile_open(dir, err, sizeof err));
  assert_non_null(strstr(err, "is a directory"));
  assert_int_equal(strays(), 0);
}

/* The process's own descriptors (/dev/stdout, /dev/fd/N, /proc/self/fd/N)
 * are written through the descriptor: with standard output redirected to a
 * file, stat followed /dev/stdout to that regular file and the commit
 * renamed a temporary over the link (as root the system's /dev/stdout
 * became a file). */
static void own_descriptors_are_written_through(void **state) {
  (void)state;
  char err[256], name[64];
  int fd = open(other, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  assert_true(fd >= 0);
  for (int i = 0; i < 2; i++) {
    if (i == 0) snprintf(name, sizeof name, "/dev/fd/%d", fd);
    else snprintf(name, sizeof name, "/proc/self/fd/%d", fd);
    kvp_afile *f = kvp_afile_open(name, err, sizeof err);
    assert_non_null(f);
    assert_null(kvp_afile_temp(f));
    assert_int_equal(kvp_afile_write(f, i == 0 ? "one\n" : "two\n", 4), 0);
    assert_int_equal(kvp_afile_commit(f, err, sizeof err), 0);
  }
  assert_int_equal(write(fd, "end\n", 4), 4); /* the descriptor is still open, at its offset */
  close(fd);
  assert_string_equal(slurp(other), "one\ntwo\nend\n");
  struct stat st;
  assert_int_equal(lstat("/dev/stdout", &st), 0);
  assert_true(S_ISLNK(st.st_mode) || S_ISCHR(st.st_mode));
  snprintf(name, sizeof name, "/dev/fd/%d", 1000000);
  assert_null(kvp_afile_open(name, err, sizeof err));
  assert_non_null(strstr(err, "cannot write '/dev/fd/1000000'"));
  assert_int_equal(strays(), 0);
}

/* The files committed since kvp_afile_forget are listed and removed by
 * kvp_afile_remove_committed (a failed run's outputs, engine/cli/main.c):
 * only while still the file committed there; a discarded file never was. */
static void seen(const char *p, int err, void *ud) {
  assert_int_equal(err, 0);
  assert_string_equal(p, path);
  ++*(int *)ud;
}

static void committed_files_are_listed_and_removed(void **state) {
  (void)state;
  char err[256];
  kvp_afile_forget();
  kvp_afile *f = kvp_afile_open(path, err, sizeof err);
  assert_int_equal(kvp_afile_write(f, "a\n", 2), 0);
  assert_int_equal(kvp_afile_commit(f, err, sizeof err), 0);
  f = kvp_afile_open(path, err, sizeof err); /* the same path again: one file there */
  assert_int_equal(kvp_afile_write(f, "b\n", 2), 0);
  assert_int_equal(kvp_afile_commit(f, err, sizeof err), 0);
  f = kvp_afile_open(other, err, sizeof err);
  kvp_afile_discard(f); /* never renamed into place: not listed */
  assert_int_equal((int)kvp_afile_committed(), 2);
  int n = 0;
  assert_int_equal(kvp_afile_remove_committed(seen, &n), 1);
  assert_int_equal(n, 1);
  assert_int_equal(access(path, F_OK), -1);
  assert_int_equal((int)kvp_afile_committed(), 0);
  /* a file another program put there since is left */
  f = kvp_afile_open(path, err, sizeof err);
  assert_int_equal(kvp_afile_commit(f, err, sizeof err), 0);
  assert_int_equal(rename(path, other), 0); /* kept: its inode cannot be reused */
  put(path, "theirs\n");
  assert_int_equal(kvp_afile_remove_committed(NULL, NULL), 0);
  assert_string_equal(slurp(path), "theirs\n");
  unlink(other);
  assert_int_equal(strays(), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(commit_replaces_the_file_whole),
    cmocka_unit_test(discard_keeps_the_old_file),
    cmocka_unit_test(a_failed_write_is_an_error_and_keeps_the_old_file),
    cmocka_unit_test(a_planted_symlink_is_replaced_not_followed),
    cmocka_unit_test(two_writers_get_two_temporaries),
    cmocka_unit_test(a_signal_handler_can_remove_every_temporary),
    cmocka_unit_test(a_missing_directory_is_a_clear_error),
    cmocka_unit_test(devices_and_fifos_are_written_in_place),
    cmocka_unit_test(own_descriptors_are_written_through),
    cmocka_unit_test(committed_files_are_listed_and_removed),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
