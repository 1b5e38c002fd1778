package io.parambus.client;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A subscription to parameters of a {@link PbusClient}: pbusd notifies their changes,
 * coalesced as its {@link SubscribeOptions} say (docs/socket-protocol.md §3.4). It
 * outlives connections: after pbusd restarts, the client subscribes again and the values
 * come anew. Made with a {@link SubscriptionListener}, it calls the listener on the
 * client's dispatcher thread; made without, the values are taken with {@link #next},
 * which any number of threads may wait in (each change set goes to one of them).
 * {@link #close()} ends it. Thread-safe.
 */
public final class Subscription implements AutoCloseable {
    private final PbusClient client;
    private final int id;
    private final int[] indexes;
    private final SubscribeOptions options;
    private final SubscriptionListener listener;

    // The current connection's side, written by the reader under the client's lock.
    private volatile Connection connection;
    private volatile int serverId;
    private volatile boolean closed;

    // Pull mode: the latest value of each position changed since the last next().
    private final ReentrantLock pullLock = new ReentrantLock();
    private final Condition pullChanged = pullLock.newCondition();
    private final Value[] pending;
    private int pendingCount;
    private int lastPosition;

    Subscription(PbusClient client, int id, int[] indexes, SubscribeOptions options, SubscriptionListener listener) {
        this.client = client;
        this.id = id;
        this.indexes = indexes;
        this.options = options;
        this.listener = listener;
        this.pending = listener == null ? new Value[indexes.length] : null;
    }

    /** The client's id of the subscription: unique in its client, never 0, the same across reconnects. */
    public int id() {
        return id;
    }

    /** The client it belongs to. */
    public PbusClient client() {
        return client;
    }

    /** The parameters' indexes, in the order given (a new array each call). */
    public int[] indexes() {
        return indexes.clone();
    }

    int[] indexesRef() {
        return indexes;
    }

    /** The options it was made with. */
    public SubscribeOptions options() {
        return options;
    }

    /** Its listener, or {@code null} for a subscription read with {@link #next}. */
    public SubscriptionListener listener() {
        return listener;
    }

    /** Whether it is subscribed on the client's current connection (false while disconnected, and once closed). */
    public boolean isActive() {
        Connection c = connection;
        return !closed && serverId != 0 && c != null && !c.isDead() && client.currentConnection() == c;
    }

    /** Whether it was closed (by {@link #close()}, by the client's close, or because its subscribing failed). */
    public boolean isClosed() {
        return closed;
    }

    Connection connection() {
        return connection;
    }

    int serverId() {
        return serverId;
    }

    /** Bound to {@code serverId} on {@code c}; under the client's lock. */
    void bound(Connection c, int serverId) {
        this.connection = c;
        this.serverId = serverId;
    }

    /** Not subscribed anywhere now (the connection was lost); under the client's lock. */
    void unbound() {
        this.serverId = 0;
        this.connection = null;
    }

    /** Marks it closed and wakes the threads waiting in {@link #next}; under the client's lock. */
    void markClosed() {
        closed = true;
        if (listener == null) {
            pullLock.lock();
            try {
                pullChanged.signalAll();
            } finally {
                pullLock.unlock();
            }
        }
    }

    /** A NOTIFY's values: to the listener's queue, or kept for {@link #next}. By the reader. */
    void deliver(Value[] values) {
        if (closed) {
            return;
        }
        if (listener != null) {
            client.enqueueValues(this, Collections.unmodifiableList(Arrays.asList(values)));
            return;
        }
        pullLock.lock();
        try {
            for (Value v : values) {
                int pos = positionOf(v.index());
                if (pos >= 0) {
                    if (pending[pos] == null) {
                        pendingCount++;
                    }
                    pending[pos] = v;
                }
            }
            pullChanged.signal();
        } finally {
            pullLock.unlock();
        }
    }

    /** The first position of {@code index}; records come in the subscription's order, so the search starts after the last. */
    private int positionOf(int index) {
        for (int k = 0; k < indexes.length; k++) {
            int pos = (lastPosition + k) % indexes.length;
            if (indexes[pos] == index) {
                lastPosition = pos;
                return pos;
            }
        }
        return -1;
    }

    /**
     * For a subscription made without a listener: waits until some of its parameters
     * changed, then returns, for each that changed since the previous call, its latest
     * value, in the subscription's order (values coalesce here as they do in pbusd: a
     * slow reader gets the latest values, never a backlog). The first call brings every
     * parameter's current value; after a reconnect, the next call brings them again.
     * While the client is disconnected, it waits. Any thread (virtual threads unmount
     * while they wait).
     *
     * @return the changed values, or an empty list if nothing changed within {@code timeout}
     * @throws IllegalStateException if the subscription has a listener
     * @throws ConnectionException {@code ENOTCONN} if the subscription is closed (also while waiting)
     * @throws InterruptedException if the thread is interrupted while it waits
     */
    public List<Value> next(Duration timeout) throws InterruptedException {
        if (listener != null) {
            throw new IllegalStateException("subscription " + id + " delivers to its listener; next() is for subscriptions without");
        }
        long nanos = timeout.toNanos();
        pullLock.lock();
        try {
            for (;;) {
                if (closed) {
                    throw new ConnectionException("ENOTCONN", "next of subscription " + id + " of " + client.instance()
                            + ": it is closed (ENOTCONN)");
                }
                if (pendingCount > 0) {
                    break;
                }
                if (nanos <= 0) {
                    return List.of();
                }
                nanos = pullChanged.awaitNanos(nanos);
            }
            List<Value> out = new ArrayList<>(pendingCount);
            for (int k = 0; k < pending.length; k++) {
                if (pending[k] != null) {
                    out.add(pending[k]);
                    pending[k] = null;
                }
            }
            pendingCount = 0;
            return Collections.unmodifiableList(out);
        } finally {
            pullLock.unlock();
        }
    }

    /** {@link #next(Duration)} with a timeout in a unit. */
    public List<Value> next(long timeout, TimeUnit unit) throws InterruptedException {
        return next(Duration.ofNanos(unit.toNanos(timeout)));
    }

    /**
     * Ends the subscription: no value and no callback of it follows (one already being
     * delivered finishes). Tells pbusd if connected. Closing it again does nothing.
     *
     * @throws ServerErrorException if pbusd refused (other than not knowing it: then it is gone anyway)
     * @throws RequestTimeoutException if pbusd did not answer in time (the subscription is closed here anyway)
     */
    @Override
    public void close() {
        client.unsubscribe(this);
    }

    /** The subscription in words. */
    @Override
    public String toString() {
        return "Subscription[" + id + " of " + client.instance() + ", " + indexes.length + " parameters, " + options
                + (closed ? ", closed" : "") + "]";
    }
}
