#define _GNU_SOURCE
#include "cchildprocess.h"

#include <signal.h>
#include <fcntl.h>
#include <spawn.h>
#include <unistd.h>

// posix_spawn rather than Foundation's Process: on Linux, Process.run reads /proc/self/fd with an over-read that crashes
// the caller now and then (swift-corelibs-foundation#5472), more often the more descriptors the suite has open.
int cchild_spawn(const char *path, char *const argv[], char *const envp[], const char *directory,
                 int in, int out, int err, pid_t *pid) {
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    int rc = posix_spawn_file_actions_init(&actions);
    if (rc != 0) return rc;
    rc = posix_spawnattr_init(&attributes);
    if (rc != 0) {
        posix_spawn_file_actions_destroy(&actions);
        return rc;
    }
    int fds[3] = {in, out, err};
    for (int target = 0; target < 3 && rc == 0; target++) {
        if (fds[target] >= 0) rc = posix_spawn_file_actions_adddup2(&actions, fds[target], target);
    }
    if (rc == 0) rc = posix_spawn_file_actions_addclosefrom_np(&actions, 3);
    if (rc == 0 && directory != NULL) rc = posix_spawn_file_actions_addchdir_np(&actions, directory);
    sigset_t all, none;
    sigfillset(&all);
    sigemptyset(&none);
    if (rc == 0) rc = posix_spawnattr_setsigdefault(&attributes, &all);
    if (rc == 0) rc = posix_spawnattr_setsigmask(&attributes, &none);
    if (rc == 0) rc = posix_spawnattr_setpgroup(&attributes, 0);
    if (rc == 0) {
        rc = posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP);
    }
    if (rc == 0) rc = posix_spawn(pid, path, &actions, &attributes, argv, envp);
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&actions);
    return rc;
}

int cchild_pipe(int fds[2]) { return pipe2(fds, O_CLOEXEC); }
