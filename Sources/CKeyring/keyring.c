#define _GNU_SOURCE
#include "keyring.h"

#include <errno.h>
#include <string.h>

#ifdef __linux__
#include <linux/keyctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/// Map the raw syscall convention (-1 + errno) to ours (-errno) so callers never read errno.
static long ckr_result(long rc) {
    return rc < 0 ? -(long)errno : rc;
}

long ckr_add_key(const char *type, const char *description, const void *payload, size_t plen, ckr_serial_t keyring) {
    return ckr_result(syscall(SYS_add_key, type, description, payload, plen, keyring));
}

long ckr_get_keyring_id(ckr_serial_t id, int create) {
    return ckr_result(syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, id, create));
}

long ckr_search(ckr_serial_t keyring, const char *type, const char *description) {
    return ckr_result(syscall(SYS_keyctl, KEYCTL_SEARCH, keyring, type, description, (ckr_serial_t)0));
}

long ckr_read(ckr_serial_t key, void *buffer, size_t buflen) {
    return ckr_result(syscall(SYS_keyctl, KEYCTL_READ, key, buffer, buflen));
}

long ckr_set_perm(ckr_serial_t key, uint32_t perm) {
    return ckr_result(syscall(SYS_keyctl, KEYCTL_SETPERM, key, perm));
}

long ckr_set_timeout(ckr_serial_t key, unsigned int seconds) {
    return ckr_result(syscall(SYS_keyctl, KEYCTL_SET_TIMEOUT, key, seconds));
}

long ckr_link(ckr_serial_t key, ckr_serial_t keyring) {
    return ckr_result(syscall(SYS_keyctl, KEYCTL_LINK, key, keyring));
}

long ckr_unlink(ckr_serial_t key, ckr_serial_t keyring) {
    return ckr_result(syscall(SYS_keyctl, KEYCTL_UNLINK, key, keyring));
}

long ckr_invalidate(ckr_serial_t key) {
    return ckr_result(syscall(SYS_keyctl, KEYCTL_INVALIDATE, key));
}

long ckr_describe(ckr_serial_t key, char *buffer, size_t buflen) {
    return ckr_result(syscall(SYS_keyctl, KEYCTL_DESCRIBE, key, buffer, buflen));
}

long ckr_join_new_session_keyring(void) {
    return ckr_result(syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, (const char *)NULL));
}

void ckr_wipe(void *buffer, size_t length) {
    explicit_bzero(buffer, length);
}
#else
// Not Linux: no kernel key retention service; every call says so (ENOSYS), and the caller uses its slow path.
long ckr_add_key(const char *type, const char *description, const void *payload, size_t plen, ckr_serial_t keyring) {
    (void)type; (void)description; (void)payload; (void)plen; (void)keyring; return -ENOSYS;
}
long ckr_get_keyring_id(ckr_serial_t id, int create) { (void)id; (void)create; return -ENOSYS; }
long ckr_search(ckr_serial_t keyring, const char *type, const char *description) {
    (void)keyring; (void)type; (void)description; return -ENOSYS;
}
long ckr_read(ckr_serial_t key, void *buffer, size_t buflen) { (void)key; (void)buffer; (void)buflen; return -ENOSYS; }
long ckr_set_perm(ckr_serial_t key, uint32_t perm) { (void)key; (void)perm; return -ENOSYS; }
long ckr_set_timeout(ckr_serial_t key, unsigned int seconds) { (void)key; (void)seconds; return -ENOSYS; }
long ckr_link(ckr_serial_t key, ckr_serial_t keyring) { (void)key; (void)keyring; return -ENOSYS; }
long ckr_unlink(ckr_serial_t key, ckr_serial_t keyring) { (void)key; (void)keyring; return -ENOSYS; }
long ckr_invalidate(ckr_serial_t key) { (void)key; return -ENOSYS; }
long ckr_describe(ckr_serial_t key, char *buffer, size_t buflen) { (void)key; (void)buffer; (void)buflen; return -ENOSYS; }
long ckr_join_new_session_keyring(void) { return -ENOSYS; }
void ckr_wipe(void *buffer, size_t length) { memset_s(buffer, length, 0, length); }
#endif
