/* Faults the runtime must survive with a complete profile: `faults MODE`.
 *   segv, abort, term  work(), then descend 4 levels and crash / abort() / raise(SIGTERM)
 *   wait               work(), print "ready", then spin until a signal ends it (up to 20 s)
 *   fork               work(); the child calls work() twice and exits with 3; the parent
 *                      waits, calls work() and prints the child's status
 *   running-thread     a thread spins in spin_forever() while main returns
 *   recursion N        recurse N deep (on a thread with a 1 GiB stack)
 *   exit5              work(), then return 5
 *   exec               work(), then from 2 levels down exec this program again as `faults
 *                      after-exec`, which calls work() twice and exits with 4
 *   exec-fail          work(), an execv of a missing file (it fails), then work() again
 *   spawn              work(); fork, and the child execs /bin/echo at once (execlp), vfork
 *                      and the child execs /bin/echo (execl); the parent waits for both
 * Each mode's plain and instrumented builds behave the same (output, exit status). */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile long counter;
static volatile int *volatile nowhere;

__attribute__((noinline)) void work(void) {
  for (int i = 0; i < 1000; i++)
    counter += i;
}

__attribute__((noinline)) void descend(int depth, const char *mode) {
  if (depth > 0) {
    descend(depth - 1, mode);
    counter++;
    return;
  }
  if (strcmp(mode, "segv") == 0)
    *nowhere = 1;
  else if (strcmp(mode, "abort") == 0)
    abort();
  else
    raise(SIGTERM);
}

__attribute__((noinline)) void exec_self(int depth, const char *self) {
  if (depth > 0) {
    exec_self(depth - 1, self);
    return;
  }
  execl(self, self, "after-exec", (char *)NULL);
  perror("execl");
  exit(1);
}

__attribute__((noinline)) void try_missing(void) {
  char *argv[] = {"missing", NULL};
  if (execv("/nonexistent/program", argv) == -1)
    printf("execv failed as expected\n");
}

__attribute__((noinline)) void spawn(void) {
  pid_t child = fork();
  if (child == 0) {
    execlp("echo", "echo", "from the forked child", (char *)NULL);
    _exit(127);
  }
  int status = 0;
  waitpid(child, &status, 0);
  child = vfork();
  if (child == 0) {
    execl("/bin/echo", "echo", "from the vforked child", (char *)NULL);
    _exit(127);
  }
  waitpid(child, &status, 0);
}

__attribute__((noinline)) void spin(void) {
  printf("ready\n"); /* from inside: the frame is open when the test sends its signal */
  time_t end = time(NULL) + 20;
  while (time(NULL) < end)
    work();
}

__attribute__((noinline)) void *spin_forever(void *unused) {
  (void)unused;
  for (;;)
    work();
  return NULL;
}

__attribute__((noinline)) long recurse(long n) { return n == 0 ? 0 : 1 + recurse(n - 1) + (counter & 0); }

static long depth_wanted;
static void *run_recursion(void *unused) {
  (void)unused;
  printf("depth %ld\n", recurse(depth_wanted));
  return NULL;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  setvbuf(stdout, NULL, _IONBF, 0);
  if (strcmp(mode, "recursion") == 0) {
    depth_wanted = argc > 2 ? atol(argv[2]) : 1000000;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 1L << 30);
    pthread_t thread;
    if (pthread_create(&thread, &attr, run_recursion, NULL) != 0)
      return 2;
    pthread_join(thread, NULL);
    return 0;
  }
  work();
  if (strcmp(mode, "segv") == 0 || strcmp(mode, "abort") == 0 || strcmp(mode, "term") == 0) {
    descend(3, mode);
  } else if (strcmp(mode, "wait") == 0) {
    spin();
  } else if (strcmp(mode, "fork") == 0) {
    pid_t child = fork();
    if (child == 0) {
      work();
      work();
      exit(3);
    }
    int status = 0;
    waitpid(child, &status, 0);
    work();
    printf("child exited with %d\n", WEXITSTATUS(status));
  } else if (strcmp(mode, "exit5") == 0) {
    return 5;
  } else if (strcmp(mode, "exec") == 0) {
    exec_self(2, argv[0]);
  } else if (strcmp(mode, "after-exec") == 0) {
    work();
    printf("after exec\n");
    return 4;
  } else if (strcmp(mode, "exec-fail") == 0) {
    try_missing();
    work();
  } else if (strcmp(mode, "spawn") == 0) {
    spawn();
  } else if (strcmp(mode, "running-thread") == 0) {
    pthread_t thread;
    pthread_create(&thread, NULL, spin_forever, NULL);
    usleep(20000);
    printf("main returns\n");
  } else {
    fprintf(stderr, "usage: faults segv|abort|term|wait|fork|exit5|exec|exec-fail|spawn|running-thread|recursion [N]\n");
    return 2;
  }
  return 0;
}
