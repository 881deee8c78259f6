/* test_proc.c: a program run without a shell: its words and input are
 * data, its status and standard error come back, a stop flag ends it. */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "proc.h"

static char sh[] = "sh", c[] = "-c", zero[] = "sh";

static void status_and_stderr_come_back(void **state) {
  (void)state;
  char script[] = "read x; echo \"got $x\" >&2; exit 3";
  char *const argv[] = {sh, c, script, NULL};
  char err[256];
  assert_int_equal(kvp_proc_run(argv, "line\n", 5, NULL, err, sizeof err), 3);
  assert_string_equal(err, "got line\n");
}

static void words_are_not_shell_commands(void **state) {
  (void)state;
  char script[] = "printf %s \"$1\" >&2";
  char word[] = "$(touch /tmp/kvplan_test_proc_pwned); `touch /tmp/kvplan_test_proc_pwned`";
  char *const argv[] = {sh, c, script, zero, word, NULL};
  char err[256];
  unlink("/tmp/kvplan_test_proc_pwned");
  assert_int_equal(kvp_proc_run(argv, "", 0, NULL, err, sizeof err), 0);
  assert_string_equal(err, word);
  assert_int_equal(access("/tmp/kvplan_test_proc_pwned", F_OK), -1);
}

static void a_large_input_does_not_block(void **state) {
  (void)state;
  size_t n = 4u << 20;
  char *in = malloc(n);
  assert_non_null(in);
  memset(in, 'x', n);
  char script[] = "wc -c >&2";
  char *const argv[] = {sh, c, script, NULL};
  char err[256];
  assert_int_equal(kvp_proc_run(argv, in, n, NULL, err, sizeof err), 0);
  assert_int_equal(atol(err), (long)n);
  free(in);
}

static void a_missing_program_is_127(void **state) {
  (void)state;
  char name[] = "kvplan-no-such-program";
  char *const argv[] = {name, NULL};
  char err[256];
  assert_int_equal(kvp_proc_run(argv, "", 0, NULL, err, sizeof err), 127);
}

static void a_signal_is_128_plus_it(void **state) {
  (void)state;
  char script[] = "kill -9 $$";
  char *const argv[] = {sh, c, script, NULL};
  char err[256];
  assert_int_equal(kvp_proc_run(argv, "", 0, NULL, err, sizeof err), 128 + 9);
}

static volatile sig_atomic_t stop;
static void on_alarm(int sig) { (void)sig; stop = 1; }

static void the_stop_flag_ends_it(void **state) {
  (void)state;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm; /* no SA_RESTART: waitpid is interrupted */
  sigaction(SIGALRM, &sa, NULL);
  stop = 0;
  alarm(1);
  char script[] = "exec sleep 30";
  char *const argv[] = {sh, c, script, NULL};
  char err[256];
  assert_int_equal(kvp_proc_run(argv, "", 0, &stop, err, sizeof err), -1);
  assert_string_equal(err, "stopped");
  signal(SIGALRM, SIG_DFL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(status_and_stderr_come_back),
    cmocka_unit_test(words_are_not_shell_commands),
    cmocka_unit_test(a_large_input_does_not_block),
    cmocka_unit_test(a_missing_program_is_127),
    cmocka_unit_test(a_signal_is_128_plus_it),
    cmocka_unit_test(the_stop_flag_ends_it),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
