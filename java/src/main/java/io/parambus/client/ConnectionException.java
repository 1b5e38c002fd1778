package io.parambus.client;

import io.parambus.ParambusException;

/**
 * The client has no usable connection to pbusd: no socket for the instance
 * ({@code ENOENT}), nobody listening ({@code ECONNREFUSED}), the connection lost
 * ({@code ECONNRESET}, and then a request may or may not have been applied: the
 * message says which), not connected and the one attempt to reconnect failed
 * ({@code ENOTCONN}), or the client closed. {@link UntrustedServerException} is the
 * case of a socket served by a user the client does not trust. Immutable, so thread-safe.
 */
public class ConnectionException extends ParambusException {
    private static final long serialVersionUID = 1L;

    /** A connection error with the errno name of its C equivalent and a one-line message. */
    public ConnectionException(String errno, String message) {
        super(errno, message);
    }

    /** A connection error caused by an I/O error of the socket. */
    public ConnectionException(String errno, String message, Throwable cause) {
        super(errno, message, cause);
    }
}
