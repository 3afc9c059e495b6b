// Thin, non-variadic wrappers over the Linux key-retention syscalls.
//
// Swift cannot call the variadic syscall(2), and b2c must not depend on libkeyutils, so each wrapper issues exactly
// one syscall(SYS_add_key / SYS_keyctl, ...) with fixed arguments.
//
// Every function returns a non-negative value on success and -errno on failure. Returning the error code (instead of
// leaving it in errno) means the Swift side never has to read a thread-local that the runtime might clobber between
// the call and the check.
#ifndef B2C_CKEYRING_H
#define B2C_CKEYRING_H

#include <stddef.h>
#include <stdint.h>

/// Kernel key serial number (key_serial_t).
typedef int32_t ckr_serial_t;

/// Special keyring IDs (from <linux/keyctl.h>), re-exported as enum constants so Swift sees them as plain Int32.
enum {
    CKR_SPEC_THREAD_KEYRING = -1,
    CKR_SPEC_PROCESS_KEYRING = -2,
    CKR_SPEC_SESSION_KEYRING = -3,
    CKR_SPEC_USER_KEYRING = -4,
    CKR_SPEC_USER_SESSION_KEYRING = -5,
};

/// add_key(type, description, payload, plen, keyring): create a key, or update the payload of a key of the same type
/// and description already linked in `keyring`. Returns the key's serial.
long ckr_add_key(const char *type, const char *description, const void *payload, size_t plen, ckr_serial_t keyring);

/// keyctl(KEYCTL_GET_KEYRING_ID, id, create): resolve a special keyring ID to a serial. Cheap availability probe.
long ckr_get_keyring_id(ckr_serial_t id, int create);

/// keyctl(KEYCTL_SEARCH, keyring, type, description, 0): recursive search of `keyring` (which needs Search permission)
/// for a key with an exact type+description match. Returns the key's serial.
long ckr_search(ckr_serial_t keyring, const char *type, const char *description);

/// keyctl(KEYCTL_READ, key, buffer, buflen): copies at most `buflen` bytes of the payload and returns the payload's
/// full size, which may exceed `buflen` (then call again with a larger buffer).
long ckr_read(ckr_serial_t key, void *buffer, size_t buflen);

/// keyctl(KEYCTL_SETPERM, key, perm): replace the key's permission mask (needs SetAttr).
long ckr_set_perm(ckr_serial_t key, uint32_t perm);

/// keyctl(KEYCTL_SET_TIMEOUT, key, seconds): expire the key `seconds` from now; 0 clears the timeout (needs SetAttr).
long ckr_set_timeout(ckr_serial_t key, unsigned int seconds);

/// keyctl(KEYCTL_LINK, key, keyring): link `key` into `keyring`, displacing any key of the same type+description.
long ckr_link(ckr_serial_t key, ckr_serial_t keyring);

/// keyctl(KEYCTL_UNLINK, key, keyring): remove one link.
long ckr_unlink(ckr_serial_t key, ckr_serial_t keyring);

/// keyctl(KEYCTL_INVALIDATE, key): mark the key dead at once; it vanishes from every keyring (needs Search).
long ckr_invalidate(ckr_serial_t key);

/// keyctl(KEYCTL_DESCRIBE, key, buffer, buflen): "type;uid;gid;perm;description". Returns the full length incl. NUL.
long ckr_describe(ckr_serial_t key, char *buffer, size_t buflen);

/// keyctl(KEYCTL_JOIN_SESSION_KEYRING, NULL): give the calling process a fresh anonymous session keyring that does
/// not link the user keyring: what `keyctl new_session` and systemd's KeyringMode=private do. Used by tests.
long ckr_join_new_session_keyring(void);

/// explicit_bzero: wipe a buffer that held key material in a way the compiler may not elide.
void ckr_wipe(void *buffer, size_t length);

#endif
