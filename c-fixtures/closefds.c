/* Behaves like a daemon: closes every descriptor above 2 (the runtime's live segment among
 * them), opens a file of its own (argv[1]), which gets the lowest free number, then starts a
 * thread and forks. The runtime must never touch that descriptor: it prints the descriptor and
 * the file's size, "3 5". */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) void *worker(void *arg) {
    return arg;
}

int main(int argc, char **argv) {
    if (argc < 2)
        return 2;
    for (int fd = 3; fd < 1024; fd++)
        close(fd);
    int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || write(fd, "hello", 5) != 5)
        return 1;
    pthread_t thread;
    pthread_create(&thread, NULL, worker, NULL);
    pthread_join(thread, NULL);
    pid_t child = fork();
    if (child == 0) {
        worker(NULL);
        _exit(0);
    }
    waitpid(child, NULL, 0);
    struct stat st;
    fstat(fd, &st);
    printf("%d %lld\n", fd, (long long)st.st_size);
    return 0;
}
