package io.parambus.client;

import java.time.Duration;

/**
 * How pbusd coalesces a subscription's notifications (docs/socket-protocol.md §3.4):
 * at most one notification per {@linkplain #minIntervalMicros() interval}, and a
 * {@linkplain #deadband() deadband} below which a numeric scalar's change is not worth
 * one. Immutable: the {@code with*} methods return changed copies; thread-safe.
 */
public final class SubscribeOptions {
    private static final SubscribeOptions DEFAULTS = new SubscribeOptions(0, 0.0);

    private final int minIntervalMicros;
    private final double deadband;

    private SubscribeOptions(int minIntervalMicros, double deadband) {
        this.minIntervalMicros = minIntervalMicros;
        this.deadband = deadband;
    }

    /** Every change, as it comes: no interval, no deadband. */
    public static SubscribeOptions defaults() {
        return DEFAULTS;
    }

    /**
     * Ignore changes of numeric scalars smaller than {@code deadband} (|new − last sent|,
     * computed in binary64) whose status did not change; 0 sends every change. pbusd refuses
     * a negative, NaN or infinite deadband ({@link ServerErrorException} {@code EINVAL}); the
     * client leaves that judgement to the server.
     */
    public SubscribeOptions withDeadband(double deadband) {
        return new SubscribeOptions(minIntervalMicros, deadband);
    }

    /**
     * At most one notification per {@code interval} (whole microseconds; 0: no limit);
     * changes within it are coalesced into the next.
     *
     * @throws IllegalArgumentException if negative or above 2^32 − 1 µs (about 71 minutes)
     */
    public SubscribeOptions withMinInterval(Duration interval) {
        long us = interval.toNanos() / 1000;
        if (interval.isNegative() || us > 0xFFFFFFFFL) {
            throw new IllegalArgumentException("min interval " + interval + " not in 0 … 2^32-1 µs");
        }
        return new SubscribeOptions((int) us, deadband);
    }

    /**
     * At most {@code hertz} notifications a second: a minimum interval of 1/hertz.
     *
     * @throws IllegalArgumentException if not positive, or below one per 2^32 − 1 µs
     */
    public SubscribeOptions withMaxRate(double hertz) {
        if (!(hertz > 0)) {
            throw new IllegalArgumentException("max rate " + hertz + " Hz is not positive");
        }
        return withMinInterval(Duration.ofNanos(Math.round(1e9 / hertz)));
    }

    /** The minimum interval between notifications, in microseconds (an unsigned 32-bit number). */
    public int minIntervalMicros() {
        return minIntervalMicros;
    }

    /** The deadband. */
    public double deadband() {
        return deadband;
    }

    /** The options in words. */
    @Override
    public String toString() {
        return "SubscribeOptions[minInterval=" + Integer.toUnsignedString(minIntervalMicros) + " µs, deadband=" + deadband + "]";
    }
}
