package io.parambus.client;

import io.parambus.ParambusException;

import java.util.List;

/**
 * The callbacks of a subscription made with a listener
 * ({@link PbusClient#subscribe(int[], SubscribeOptions, SubscriptionListener)}). They run
 * on the client's dispatcher thread, one at a time and in the order of events, and may
 * make requests of the client (get, set, subscribe, close a subscription) but should
 * return promptly: while one runs, no other callback of the client runs. An exception
 * thrown by a callback goes to the dispatcher thread's uncaught-exception handler, and
 * delivery goes on.
 */
@FunctionalInterface
public interface SubscriptionListener {
    /**
     * Values of the subscription changed: for each parameter that changed since the
     * previous call, its latest value, in the subscription's order (the first call brings
     * every parameter's current value, and so does the first call after a reconnect).
     * {@code values} is unmodifiable and stays valid after the call.
     */
    void onValues(Subscription subscription, List<Value> values);

    /** The connection was lost; the client reconnects and subscribes again. Default: nothing. */
    default void onDisconnected(Subscription subscription) {
    }

    /** The client reconnected and subscribed again: fresh values follow. Default: nothing. */
    default void onResubscribed(Subscription subscription) {
    }

    /**
     * After a reconnect, pbusd refused to subscribe again (e.g. a parameter is no longer
     * allowed); the client tries again at the next reconnect. Default: nothing.
     */
    default void onResubscribeFailed(Subscription subscription, ParambusException error) {
    }
}
