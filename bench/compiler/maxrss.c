/* maxrss.c — runs a command and reports its wall time, its own peak memory
 * and its children's, without /usr/bin/time.
 *
 * usage: maxrss OUT CMD [ARGS...]
 *
 * Runs CMD (fork + execvp; stdin, stdout and stderr inherited), waits for
 * it and writes one line to the file OUT:
 *
 *   wall_ms self_kb tree_kb self_cpu_ms children_cpu_ms
 *
 *   wall_ms          wall-clock time from fork to the end of wait4
 *   self_kb          peak RSS of the CMD process itself (VmHWM of
 *                    /proc/PID/status, read at its exit through a ptrace
 *                    PTRACE_EVENT_EXIT stop); -1 if ptrace is refused
 *   tree_kb          ru_maxrss of the rusage wait4 returns: on Linux the
 *                    maximum over CMD and every descendant it waited for
 *                    (wait4 reports RUSAGE_BOTH), so for `zgc build` it is
 *                    max(zgc, cc, ld, ...)
 *   self_cpu_ms      user + system CPU of CMD itself (utime + stime of
 *                    /proc/PID/stat at exit); -1 if ptrace is refused
 *   children_cpu_ms  user + system CPU of its waited-for descendants
 *                    (cutime + cstime); -1 if ptrace is refused
 *
 * The exit status is CMD's (128 + N if it died of signal N; 127 if it
 * could not be run).  Tracing costs one stop per signal CMD receives (a
 * SIGCHLD per child) and one at its exit. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long vm_hwm_kb(pid_t pid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    long kb = -1;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "VmHWM:", 6)) {
            kb = strtol(line + 6, NULL, 10);
            break;
        }
    fclose(f);
    return kb;
}

/* utime + stime and cutime + cstime of /proc/PID/stat, in milliseconds */
static int cpu_ms(pid_t pid, double *self, double *children)
{
    char path[64], buf[4096];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')'); /* the command name may contain spaces */
    if (!p) return -1;
    p++;
    /* after ")": field 3 (state) ... field 14 utime, 15 stime, 16 cutime, 17 cstime */
    unsigned long long v[18] = {0};
    char *save = NULL;
    int field = 3;
    for (char *tok = strtok_r(p, " ", &save); tok && field <= 17;
         tok = strtok_r(NULL, " ", &save), field++)
        if (field >= 14) v[field] = strtoull(tok, NULL, 10);
    if (field <= 17) return -1;
    double tick = (double)sysconf(_SC_CLK_TCK);
    *self = (double)(v[14] + v[15]) * 1000.0 / tick;
    *children = (double)(v[16] + v[17]) * 1000.0 / tick;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: maxrss OUT CMD [ARGS...]\n");
        return 2;
    }
    FILE *out = fopen(argv[1], "w");
    if (!out) {
        perror(argv[1]);
        return 2;
    }
    int sync[2]; /* the child writes errno here if ptrace(TRACEME) fails */
    if (pipe2(sync, O_CLOEXEC) < 0) {
        perror("pipe2");
        return 2;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        return 2;
    }
    if (pid == 0) {
        close(sync[0]);
        int traced = ptrace(PTRACE_TRACEME, 0, NULL, NULL) == 0;
        if (!traced) {
            char c = 1;
            if (write(sync[1], &c, 1) < 0) _exit(127);
        }
        close(sync[1]);
        execvp(argv[2], argv + 2);
        fprintf(stderr, "maxrss: cannot run %s: %s\n", argv[2], strerror(errno));
        _exit(127);
    }
    close(sync[1]);
    char c;
    int traced = read(sync[0], &c, 1) != 1;
    close(sync[0]);

    long self_kb = -1;
    double self_cpu = -1, child_cpu = -1;
    int status;
    struct rusage ru;
    int first = 1;
    for (;;) {
        if (wait4(pid, &status, 0, &ru) < 0) {
            if (errno == EINTR) continue;
            perror("wait4");
            return 2;
        }
        if (WIFEXITED(status) || WIFSIGNALED(status)) break;
        if (!WIFSTOPPED(status)) continue;
        int sig = WSTOPSIG(status);
        if (first && traced && sig == SIGTRAP) {
            /* the stop after execve: ask for a stop at exit */
            first = 0;
            ptrace(PTRACE_SETOPTIONS, pid, NULL,
                   (void *)(long)(PTRACE_O_TRACEEXIT | PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL));
            ptrace(PTRACE_CONT, pid, NULL, NULL);
            continue;
        }
        if (sig == SIGTRAP && (status >> 16) == PTRACE_EVENT_EXEC) {
            /* CMD ran execve again (a wrapper script): keep going */
            ptrace(PTRACE_CONT, pid, NULL, NULL);
            continue;
        }
        if (sig == SIGTRAP && (status >> 16) == PTRACE_EVENT_EXIT) {
            self_kb = vm_hwm_kb(pid);
            if (cpu_ms(pid, &self_cpu, &child_cpu) < 0) self_cpu = child_cpu = -1;
            ptrace(PTRACE_CONT, pid, NULL, NULL);
            continue;
        }
        /* any other signal: deliver it */
        ptrace(PTRACE_CONT, pid, NULL, (void *)(long)sig);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double wall = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    fprintf(out, "%.2f %ld %ld %.0f %.0f\n", wall, self_kb, ru.ru_maxrss, self_cpu, child_cpu);
    fclose(out);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return WEXITSTATUS(status);
}
