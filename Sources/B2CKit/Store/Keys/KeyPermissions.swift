/// Bits of a key's permission mask (key_perm_t): four bytes for possessor, user (owner uid), group and other, each
/// holding View/Read/Write/Search/Link/SetAttr. <linux/keyctl.h> does not export these (keyutils.h does), so they are
/// spelled out here from keyctl(2).
enum KeyPermissions {
    static let view: UInt32 = 0x01
    static let read: UInt32 = 0x02
    static let write: UInt32 = 0x04
    static let search: UInt32 = 0x08
    static let link: UInt32 = 0x10
    static let setAttribute: UInt32 = 0x20
    static let all: UInt32 = 0x3f

    static func possessor(_ bits: UInt32) -> UInt32 { bits << 24 }
    static func user(_ bits: UInt32) -> UInt32 { bits << 16 }

    /// The mask b2c gives its cached data key: 0x3f0b0000.
    ///
    /// - Possessor: everything. The storing process possesses the key while configuring it.
    /// - User (same uid): view, read, search, but not write/link/setattr. Needed because "possession" is not
    ///   guaranteed: a process whose session keyring does not link the user keyring (systemd services with
    ///   KeyringMode=private, `keyctl new_session`, some ssh/PAM setups) can find the key by searching @u but does
    ///   not possess it, and the add_key default (0x3f010000, user = view only) would make KEYCTL_READ fail with
    ///   EACCES there. Search is also what KEYCTL_INVALIDATE needs, so `remove` works from any of the uid's processes.
    /// - Group, other: nothing.
    static let cachedDataKey: UInt32 = possessor(all) | user(view | read | search)
}
