package io.parambus.client;

import io.parambus.ParambusException;

/**
 * No reply came within the client's timeout ({@link ClientOptions#withTimeout}); errno
 * {@code ETIMEDOUT}. The request may still be applied by the server (its late reply is
 * recognised and dropped; a late subscription is undone). Immutable, so thread-safe.
 */
public final class RequestTimeoutException extends ParambusException {
    private static final long serialVersionUID = 1L;

    RequestTimeoutException(String message) {
        super("ETIMEDOUT", message);
    }
}
