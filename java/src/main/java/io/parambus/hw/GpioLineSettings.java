package io.parambus.hw;

import java.time.Duration;
import java.util.Objects;

/**
 * How one GPIO line is to be configured: direction, bias, drive, active-low, edge
 * detection, debounce period, event clock and, for an output, the value it starts with.
 * Immutable; made by a {@link Builder}:
 *
 * <pre>{@code
 * GpioLineSettings button = GpioLineSettings.input()
 *         .bias(GpioLineSettings.Bias.PULL_UP).edge(GpioLineSettings.Edge.BOTH)
 *         .debounce(Duration.ofMillis(5)).build();
 * GpioLineSettings enable = GpioLineSettings.output(true).build(); // high from the request on
 * }</pre>
 *
 * <p>The combinations the kernel forbids are refused by {@link Builder#build()} with an
 * {@link IllegalArgumentException} naming the problem, before any system call (as
 * libparambus-hw's {@code struct pbus_gpio_line_settings}): edge detection and debounce
 * need an input; open-drain, open-source and an output value need an output; a bias
 * needs an explicit direction.
 *
 * <p>Values are logical: with {@link Builder#activeLow(boolean) active-low}, {@code true}
 * is the low level on the wire.
 */
public final class GpioLineSettings {
    /** The line's direction. */
    public enum Direction {
        /** Leave the direction as it is (no bias, drive, edge or debounce then). */
        AS_IS,
        /** An input. */
        INPUT,
        /** An output. */
        OUTPUT
    }

    /** The line's bias (needs an explicit direction). */
    public enum Bias {
        /** Leave the bias as it is. */
        AS_IS,
        /** No pull-up or pull-down. */
        DISABLED,
        /** Pull-up. */
        PULL_UP,
        /** Pull-down. */
        PULL_DOWN
    }

    /** How an output drives the line. */
    public enum Drive {
        /** Driven both ways (the default). */
        PUSH_PULL,
        /** Driven low only (needs an output). */
        OPEN_DRAIN,
        /** Driven high only (needs an output). */
        OPEN_SOURCE
    }

    /** The edges an input reports as events (needs an input). */
    public enum Edge {
        /** No edge detection. */
        NONE,
        /** Inactive to active. */
        RISING,
        /** Active to inactive. */
        FALLING,
        /** Both. */
        BOTH
    }

    /** The clock of the events' timestamps. */
    public enum EventClock {
        /** {@code CLOCK_MONOTONIC}, the default: the clock of {@link System#nanoTime()} on Linux. */
        MONOTONIC,
        /** {@code CLOCK_REALTIME} (Linux 5.11 or later). */
        REALTIME,
        /** A hardware timestamp engine (Linux 5.19 or later with {@code CONFIG_HTE}; else the request fails EOPNOTSUPP). */
        HTE
    }

    private static final long DEBOUNCE_MAX_US = 0xFFFF_FFFFL;

    private final Direction direction;
    private final Bias bias;
    private final Drive drive;
    private final Edge edge;
    private final EventClock eventClock;
    private final boolean activeLow;
    private final boolean outputValue;
    private final long debouncePeriodUs;

    private GpioLineSettings(Builder b) {
        this.direction = b.direction;
        this.bias = b.bias;
        this.drive = b.drive;
        this.edge = b.edge;
        this.eventClock = b.eventClock;
        this.activeLow = b.activeLow;
        this.outputValue = b.outputValue;
        this.debouncePeriodUs = b.debouncePeriodUs;
    }

    /** A builder with every field at its default: as-is, push-pull, no edge, monotonic, active-high. */
    public static Builder builder() {
        return new Builder();
    }

    /** A builder for an input. */
    public static Builder input() {
        return new Builder().direction(Direction.INPUT);
    }

    /** A builder for an output that the request itself drives to {@code value} (no glitch). */
    public static Builder output(boolean value) {
        return new Builder().direction(Direction.OUTPUT).outputValue(value);
    }

    /** A builder holding these settings, to derive others from them. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.direction = direction;
        b.bias = bias;
        b.drive = drive;
        b.edge = edge;
        b.eventClock = eventClock;
        b.activeLow = activeLow;
        b.outputValue = outputValue;
        b.debouncePeriodUs = debouncePeriodUs;
        return b;
    }

    /** The direction. */
    public Direction direction() {
        return direction;
    }

    /** The bias. */
    public Bias bias() {
        return bias;
    }

    /** The drive. */
    public Drive drive() {
        return drive;
    }

    /** The edges reported as events. */
    public Edge edge() {
        return edge;
    }

    /** The clock of the events' timestamps. */
    public EventClock eventClock() {
        return eventClock;
    }

    /** Whether the line is active-low. */
    public boolean activeLow() {
        return activeLow;
    }

    /** The logical value an output starts with (always false for other directions). */
    public boolean outputValue() {
        return outputValue;
    }

    /** The debounce period in microseconds; 0 for none. */
    public long debouncePeriodUs() {
        return debouncePeriodUs;
    }

    /** The kernel's {@code gpio_v2_line_flag} bits for these settings (the output value and debounce are attributes). */
    long kernelFlags() {
        long f = 0;
        f |= switch (direction) {
            case AS_IS -> 0;
            case INPUT -> GpioUapi.FLAG_INPUT;
            case OUTPUT -> GpioUapi.FLAG_OUTPUT;
        };
        if (activeLow) {
            f |= GpioUapi.FLAG_ACTIVE_LOW;
        }
        f |= switch (bias) {
            case AS_IS -> 0;
            case DISABLED -> GpioUapi.FLAG_BIAS_DISABLED;
            case PULL_UP -> GpioUapi.FLAG_BIAS_PULL_UP;
            case PULL_DOWN -> GpioUapi.FLAG_BIAS_PULL_DOWN;
        };
        f |= switch (drive) {
            case PUSH_PULL -> 0;
            case OPEN_DRAIN -> GpioUapi.FLAG_OPEN_DRAIN;
            case OPEN_SOURCE -> GpioUapi.FLAG_OPEN_SOURCE;
        };
        f |= switch (edge) {
            case NONE -> 0;
            case RISING -> GpioUapi.FLAG_EDGE_RISING;
            case FALLING -> GpioUapi.FLAG_EDGE_FALLING;
            case BOTH -> GpioUapi.FLAG_EDGE_RISING | GpioUapi.FLAG_EDGE_FALLING;
        };
        f |= switch (eventClock) {
            case MONOTONIC -> 0;
            case REALTIME -> GpioUapi.FLAG_EVENT_CLOCK_REALTIME;
            case HTE -> GpioUapi.FLAG_EVENT_CLOCK_HTE;
        };
        return f;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof GpioLineSettings s && direction == s.direction && bias == s.bias && drive == s.drive
                && edge == s.edge && eventClock == s.eventClock && activeLow == s.activeLow
                && outputValue == s.outputValue && debouncePeriodUs == s.debouncePeriodUs;
    }

    @Override
    public int hashCode() {
        return Objects.hash(direction, bias, drive, edge, eventClock, activeLow, outputValue, debouncePeriodUs);
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder(direction.name());
        if (direction == Direction.OUTPUT) {
            sb.append(outputValue ? " value=1" : " value=0");
        }
        if (bias != Bias.AS_IS) {
            sb.append(" bias=").append(bias);
        }
        if (drive != Drive.PUSH_PULL) {
            sb.append(" drive=").append(drive);
        }
        if (activeLow) {
            sb.append(" active-low");
        }
        if (edge != Edge.NONE) {
            sb.append(" edge=").append(edge);
        }
        if (debouncePeriodUs != 0) {
            sb.append(" debounce=").append(debouncePeriodUs).append("us");
        }
        if (eventClock != EventClock.MONOTONIC) {
            sb.append(" clock=").append(eventClock);
        }
        return sb.toString();
    }

    /**
     * Builds {@link GpioLineSettings}. Not thread-safe (one thread builds); reusable:
     * every {@link #build()} returns a new immutable value.
     */
    public static final class Builder {
        private Direction direction = Direction.AS_IS;
        private Bias bias = Bias.AS_IS;
        private Drive drive = Drive.PUSH_PULL;
        private Edge edge = Edge.NONE;
        private EventClock eventClock = EventClock.MONOTONIC;
        private boolean activeLow;
        private boolean outputValue;
        private long debouncePeriodUs;

        private Builder() {
        }

        /** Sets the direction. */
        public Builder direction(Direction value) {
            this.direction = Objects.requireNonNull(value, "direction");
            return this;
        }

        /** Sets the bias (needs an explicit direction). */
        public Builder bias(Bias value) {
            this.bias = Objects.requireNonNull(value, "bias");
            return this;
        }

        /** Sets the drive (open-drain and open-source need an output). */
        public Builder drive(Drive value) {
            this.drive = Objects.requireNonNull(value, "drive");
            return this;
        }

        /** Sets the edges to report (needs an input). */
        public Builder edge(Edge value) {
            this.edge = Objects.requireNonNull(value, "edge");
            return this;
        }

        /** Sets the clock of the event timestamps. */
        public Builder eventClock(EventClock value) {
            this.eventClock = Objects.requireNonNull(value, "eventClock");
            return this;
        }

        /** Makes the line active-low (logical 1 = low level). */
        public Builder activeLow(boolean value) {
            this.activeLow = value;
            return this;
        }

        /** Sets the logical value an output starts with (true needs an output). */
        public Builder outputValue(boolean value) {
            this.outputValue = value;
            return this;
        }

        /** Sets the debounce period in microseconds, 0 to 2^32-1 (non-zero needs an input). */
        public Builder debouncePeriodUs(long micros) {
            if (micros < 0 || micros > DEBOUNCE_MAX_US) {
                throw new IllegalArgumentException("GPIO line settings: debounce period " + micros
                        + " us is outside 0.." + DEBOUNCE_MAX_US);
            }
            this.debouncePeriodUs = micros;
            return this;
        }

        /** Sets the debounce period (whole microseconds; rounded up). */
        public Builder debounce(Duration period) {
            long ns = period.toNanos();
            return debouncePeriodUs(ns <= 0 ? ns : (ns + 999) / 1000);
        }

        /**
         * The settings; refuses with {@link IllegalArgumentException} what the kernel
         * would refuse: edge detection or debounce without {@link Direction#INPUT}, a drive
         * other than push-pull or an output value of true without {@link Direction#OUTPUT},
         * a bias with {@link Direction#AS_IS}.
         */
        public GpioLineSettings build() {
            boolean input = direction == Direction.INPUT, output = direction == Direction.OUTPUT;
            if (edge != Edge.NONE && !input) {
                throw refused("edge detection " + edge + " needs direction INPUT, not " + direction);
            }
            if (debouncePeriodUs != 0 && !input) {
                throw refused("a debounce period needs direction INPUT, not " + direction);
            }
            if (drive != Drive.PUSH_PULL && !output) {
                throw refused("drive " + drive + " needs direction OUTPUT, not " + direction);
            }
            if (outputValue && !output) {
                throw refused("an output value needs direction OUTPUT, not " + direction);
            }
            if (bias != Bias.AS_IS && direction == Direction.AS_IS) {
                throw refused("bias " + bias + " needs an explicit direction (INPUT or OUTPUT), not AS_IS");
            }
            return new GpioLineSettings(this);
        }

        private static IllegalArgumentException refused(String why) {
            return new IllegalArgumentException("GPIO line settings: " + why);
        }
    }
}
