package io.parambus.client;

/**
 * The instance's socket is served by a user who is not a trusted owner
 * (docs/security.md §3, docs/socket-protocol.md §1): not root, not the program's
 * effective user, not one named in {@code PBUS_OWNER} (or {@link ClientOptions#withTrustedOwners}).
 * The client closed the socket without sending a byte. Errno {@code EPERM}, as the C
 * client's {@code pbus_client_connect()}. Immutable, so thread-safe.
 */
public final class UntrustedServerException extends ConnectionException {
    private static final long serialVersionUID = 1L;

    private final String socketPath;
    private final String serverUser;

    UntrustedServerException(String operation, String socketPath, String serverUser) {
        super("EPERM", operation + ": socket " + socketPath + " is served by user " + serverUser
                + ", who is not a trusted owner (root, this program's user, or one named in PBUS_OWNER) (EPERM)");
        this.socketPath = socketPath;
        this.serverUser = serverUser;
    }

    /** The socket's path. */
    public String socketPath() {
        return socketPath;
    }

    /** The server's user as the system names it (the numeric uid if it has no name). */
    public String serverUser() {
        return serverUser;
    }
}
