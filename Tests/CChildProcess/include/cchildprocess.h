#ifndef CCHILDPROCESS_H
#define CCHILDPROCESS_H

#include <sys/types.h>

/// Starts `path` with `argv` and `envp` (NULL-terminated), in `directory` when it is not NULL, with the given descriptors
/// as its stdin, stdout and stderr (-1: the parent's own). The child gets a process group of its own, every signal at its
/// default action and none blocked (the test runner ignores and blocks some), and no descriptor above 2 (whatever else
/// the parent has open, close-on-exec or not). Returns 0 and the child's id in `pid`, or an errno value.
int cchild_spawn(const char *path, char *const argv[], char *const envp[], const char *directory,
                 int in, int out, int err, pid_t *pid);

/// pipe2(fds, O_CLOEXEC): both ends close-on-exec from the start (Swift's Glibc module does not export pipe2).
int cchild_pipe(int fds[2]);

#endif
