/* exec() replaces the program, and atexit handlers do not run: without this, everything the
 * process measured before an exec would be lost. Links made by the instrument wrappers pass
 * `--wrap=execve` and the like (toolchain/src/runtime.rs, INTERCEPTED), which route the program's
 * calls here. Each wrapper writes the profile first (__instrument_before_exec), then calls the
 * real function; if that returns, the exec failed, the profile written for it is withdrawn and
 * measuring goes on (__instrument_exec_failed). The variadic execl family is here because
 * stable Rust cannot define variadic functions: it gathers its arguments and calls the real
 * execv, execvp or execve. Nothing here allocates, so it is safe in a vfork child. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>

void __instrument_before_exec(void);
void __instrument_exec_failed(void);

/* Defined by the linker's --wrap as the real libc functions; weak, so that a link without
 * --wrap (which never calls the wrappers) still resolves. */
extern int __real_execve(const char *, char *const[], char *const[]) __attribute__((weak));
extern int __real_execv(const char *, char *const[]) __attribute__((weak));
extern int __real_execvp(const char *, char *const[]) __attribute__((weak));
extern int __real_execvpe(const char *, char *const[], char *const[]) __attribute__((weak));
extern int __real_fexecve(int, char *const[], char *const[]) __attribute__((weak));

#define AROUND(call)                                                                               \
    do {                                                                                           \
        __instrument_before_exec();                                                                \
        int result_ = (call);                                                                      \
        int error_ = errno;                                                                        \
        __instrument_exec_failed();                                                                \
        errno = error_;                                                                            \
        return result_;                                                                            \
    } while (0)

int __wrap_execve(const char *path, char *const argv[], char *const envp[]) {
    AROUND(__real_execve(path, argv, envp));
}

int __wrap_execv(const char *path, char *const argv[]) { AROUND(__real_execv(path, argv)); }

int __wrap_execvp(const char *file, char *const argv[]) { AROUND(__real_execvp(file, argv)); }

int __wrap_execvpe(const char *file, char *const argv[], char *const envp[]) {
    AROUND(__real_execvpe(file, argv, envp));
}

int __wrap_fexecve(int fd, char *const argv[], char *const envp[]) {
    AROUND(__real_fexecve(fd, argv, envp));
}

/* The arguments of an execl call after `first`, up to and including the terminating null. */
static size_t count_arguments(va_list args) {
    size_t n = 1;
    while (va_arg(args, const char *) != NULL)
        n++;
    return n + 1;
}

static void gather(const char *first, va_list args, char **argv) {
    size_t i = 0;
    argv[i++] = (char *)first;
    if (first != NULL) {
        const char *next;
        do {
            next = va_arg(args, const char *);
            argv[i++] = (char *)next;
        } while (next != NULL);
    }
}

#define GATHER(argv, first)                                                                        \
    va_list args_;                                                                                 \
    va_start(args_, first);                                                                        \
    size_t count_ = (first) == NULL ? 1 : count_arguments(args_);                                  \
    va_end(args_);                                                                                 \
    char *argv[count_];                                                                            \
    va_start(args_, first);                                                                        \
    gather(first, args_, argv);

int __wrap_execl(const char *path, const char *arg, ...) {
    GATHER(argv, arg);
    va_end(args_);
    AROUND(__real_execv(path, argv));
}

int __wrap_execlp(const char *file, const char *arg, ...) {
    GATHER(argv, arg);
    va_end(args_);
    AROUND(__real_execvp(file, argv));
}

int __wrap_execle(const char *path, const char *arg, ...) {
    GATHER(argv, arg);
    char *const *envp = va_arg(args_, char *const *);
    va_end(args_);
    AROUND(__real_execve(path, argv, envp));
}
