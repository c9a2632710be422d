/// What the store tells its owner about space on the data volume (logged and counted by
/// the server; `EngineHooks.observeStorage`), from engines that watch a local volume.
public enum StorageEvent: Sendable, Equatable {
    /// A write (tree or accounts) failed for lack of space. Sent for every such failure.
    case writeRefused
    /// The first refusal after a healthy period: writes are refused until space is freed.
    case becameFull(directory: String)
    /// The readiness check found the reserve whole and `reserveBytes` more free
    /// again: writes are expected to commit.
    case recovered
    /// The reserve could not be allocated at start (the volume is nearly full already).
    case reserveUnavailable(directory: String)
    /// A sync of `file` failed (`errno`): what the disk holds is unknown, so writes are
    /// refused until the process restarts.
    case syncFailed(file: String, errno: Int32)

    /// Bytes an engine on a local volume holds back for deletes on a full disk (1 MiB: a
    /// delete of a few thousand nodes touches far fewer pages; Hearth still starts on an
    /// 8 MiB volume).
    public static let reserveBytes = 1 << 20
}
