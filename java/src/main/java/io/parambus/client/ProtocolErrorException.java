package io.parambus.client;

import io.parambus.ParambusException;

/**
 * The server sent something the protocol does not allow (a malformed frame, a reply
 * that does not answer the request, a schema that does not parse or whose hash is not
 * the one announced); errno {@code EPROTO}. The client drops the connection (and
 * reconnects, if it may). Immutable, so thread-safe.
 */
public final class ProtocolErrorException extends ParambusException {
    private static final long serialVersionUID = 1L;

    ProtocolErrorException(String message) {
        super("EPROTO", message);
    }
}
