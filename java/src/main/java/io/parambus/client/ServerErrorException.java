package io.parambus.client;

import io.parambus.ParambusException;

/**
 * pbusd refused a request: its {@code ERROR} reply (docs/socket-protocol.md §5), with the
 * server's code and its one-line message. {@link #errno()} is the code's name
 * ({@code "ENOENT"}, {@code "EACCES"}, {@code "EMFILE"} …), {@link #code()} the code as
 * sent (a negative errno), {@link #serverMessage()} the server's own words; the
 * exception's message adds the operation and the instance. Refusals of the handshake
 * ({@code ESTALE}: another schema, {@code EUSERS}: too many clients,
 * {@code EPROTONOSUPPORT}) are of this type too. Immutable, so thread-safe.
 */
public class ServerErrorException extends ParambusException {
    private static final long serialVersionUID = 1L;

    private final int code;
    private final String serverMessage;

    /**
     * A refusal: {@code operation} names what was asked ("get psu"), {@code code} is the
     * server's code (negative errno), {@code serverMessage} its message.
     */
    public ServerErrorException(String operation, int code, String serverMessage) {
        super(Errno.name(code), operation + ": " + serverMessage + " (" + Errno.name(code) + ")");
        this.code = code;
        this.serverMessage = serverMessage;
    }

    /** A refusal whose message the client composed ({@link SetRefusedException}). */
    ServerErrorException(int code, String message, String serverMessage) {
        super(Errno.name(code), message);
        this.code = code;
        this.serverMessage = serverMessage;
    }

    /** The server's code, a negative errno ({@code -2} for {@code ENOENT}). */
    public int code() {
        return code;
    }

    /** The server's one-line message, as it sent it (for a refused SET: the client's explanation). */
    public String serverMessage() {
        return serverMessage;
    }
}
