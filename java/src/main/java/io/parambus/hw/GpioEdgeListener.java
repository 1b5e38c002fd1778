package io.parambus.hw;

/**
 * Receives the edges of a request's lines from a {@link GpioEventPoller}
 * ({@link GpioEventPoller#listen(GpioRequest, GpioEdgeListener)}).
 *
 * <p>Threads: called on the poller's executor, never on the poller thread itself
 * (unless the executor runs tasks in the calling thread), one call at a time per
 * registration and in the kernel's order; different registrations run in parallel.
 * A listener may block (its own events wait in its queue, then in the kernel's buffer);
 * with a virtual-thread executor, blocking costs no platform thread.
 *
 * <p>Errors: an exception thrown by a listener goes to the poller's uncaught-exception
 * handler and delivery goes on with the next event.
 */
@FunctionalInterface
public interface GpioEdgeListener {
    /** One edge of a line this listener listens to. */
    void onEdge(GpioEdgeEvent event);

    /**
     * Reading the request's events failed (e.g. {@code ENODEV}: the chip was removed);
     * no more events come through this registration. Called once, after every event read
     * before the failure. The default rethrows it, so that it reaches the poller's
     * uncaught-exception handler: override it to handle the failure here.
     */
    default void onError(HwException error) {
        throw error;
    }
}
