package io.parambus.client;

import io.parambus.ParambusException;

/**
 * Told when a client's connection to pbusd is lost, renewed or given up
 * ({@link PbusClient#addConnectionListener}). Runs on the client's dispatcher thread, like
 * the subscriptions' callbacks, and may make requests of the client. An exception it
 * throws goes to the dispatcher thread's uncaught-exception handler.
 */
@FunctionalInterface
public interface ConnectionListener {
    /** What happened to the connection. */
    enum State {
        /** Connected again after a loss (subscriptions renewed). */
        CONNECTED,
        /** The connection was lost; the client reconnects (unless its options say not to). */
        DISCONNECTED,
        /** The client stopped for good: closed, or a reconnect found another schema ({@code ESTALE}). */
        CLOSED
    }

    /** The connection's new state; {@code cause} says why for DISCONNECTED and CLOSED (null after {@link PbusClient#close()}). */
    void connectionChanged(State state, ParambusException cause);
}
